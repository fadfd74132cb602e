#!/usr/bin/python
"""machined_facts: what a node runs and how it is, read through Get/List."""

from __future__ import annotations

DOCUMENTATION = r"""
module: machined_facts
short_description: Read a machined node's version, booted slot, status and resources
description:
  - Calls Version, Get MachineStatus and Get UpgradeStatus, and Get or List for each entry of I(resources).
  - Sets the C(machined) fact; never changes anything.
extends_documentation_fragment: [machined.fleet.connection]
options:
  resources:
    description: Resources to read - C(type), and C(id) (Get) or none (List), optionally C(namespace).
    type: list
    elements: dict
    default: []
author: machined maintainers (@machined)
"""

EXAMPLES = r"""
- machined.fleet.machined_facts:
    resources:
      - {type: MachineConfig, id: v1alpha1}
      - {type: ServiceStatus}
- ansible.builtin.debug:
    msg: "{{ machined.version.version }} on slot {{ machined.booted_slot }}"
"""

RETURN = r"""
ansible_facts:
  description: C(machined) - version, machine_status, booted_slot, upgrade_status, resources, config_sha256.
  returned: success
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.machined.fleet.plugins.module_utils.common import (
    client_factory,
    connection_args,
    run,
)
from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    ConnectError,
    MachinedError,
)
from ansible_collections.machined.fleet.plugins.module_utils.node import get_spec, resource_spec


def facts(module):
    client = client_factory(module.params)()
    version = client.unary("Version")
    try:
        upgrade = get_spec(client, "UpgradeStatus", "upgrade")
    except ConnectError as e:
        if e.code not in ("not_found", "invalid_argument"):
            raise
        upgrade = None  # dev mode or a node without slots
    config = get_spec(client, "MachineConfig", "v1alpha1") or {}
    out = {
        "version": version,
        "boot_id": version.get("bootId", ""),
        "booted_slot": version.get("slot", ""),
        "machine_status": get_spec(client, "MachineStatus", "machine") or {},
        "upgrade_status": upgrade,
        "config_sha256": config.get("sha256", ""),
        "resources": [read(client, r) for r in module.params["resources"]],
    }
    return {"changed": False, "ansible_facts": {"machined": out}}


def read(client, req: dict) -> dict:
    rtype, rid, ns = req.get("type"), req.get("id"), req.get("namespace", "")
    if not rtype:
        raise MachinedError(f"resources: an entry without type: {req}")
    if rid:
        res = client.unary("Get", {"type": rtype, "id": rid, "namespace": ns}).get("resource")
        return {"type": rtype, "id": rid, "metadata": res["metadata"], "spec": resource_spec(res)}
    items = client.unary("List", {"type": rtype, "namespace": ns}).get("resources", [])
    return {"type": rtype, "items": [{"metadata": r["metadata"], "spec": resource_spec(r)}
                                     for r in items]}


def main():
    module = AnsibleModule(
        argument_spec=connection_args(resources={"type": "list", "elements": "dict",
                                                 "default": []}),
        supports_check_mode=True,
    )
    run(module, facts)


if __name__ == "__main__":
    main()
