#!/usr/bin/python
"""machined_upgrade: install a signed bundle into the slot not booted, reboot
into it, and wait until the node blesses it (or report the rollback)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: machined_upgrade
short_description: Upgrade a machined node with a signed A/B bundle and wait for the new slot to be blessed
description:
  - Streams I(src) (a bundle on the controller) to Upgrade, or has the node fetch I(from_url).
  - Unless I(stage), the node reboots into the new slot; the task waits until it is back with a new boot
    id, on the new slot and version, and the slot is blessed. A node that came back on the old slot fails
    the task with the node's recorded outcome and reason (rolled back), so a play with C(serial=1) and
    C(max_fail_percentage=0) stops at that node and never touches the next batches.
  - With I(version), a node already running it is left alone (C(changed=false)).
extends_documentation_fragment: [machined.fleet.connection]
options:
  src: {description: The bundle file on the controller., type: path}
  from_url: {description: The node fetches the bundle from this http(s) URL instead., type: str}
  version: {description: The image version the bundle carries; skips nodes already on it., type: str}
  stage: {description: 'Write and arm, do not reboot.', type: bool, default: false}
  force: {description: Install even below the downgrade floor., type: bool, default: false}
  reboot_mode:
    description: How the node reboots into the new slot.
    type: str
    choices: [default, kexec, powercycle]
    default: default
  wait_timeout: {description: Seconds to wait for the blessed slot., type: float, default: 900}
author: machined maintainers (@machined)
"""

EXAMPLES = r"""
- machined.fleet.machined_upgrade:
    src: build/machined-0.2.0.bundle
    version: 0.2.0
"""

RETURN = r"""
slot: {description: The slot written., returned: when sent, type: str}
image_version: {description: The bundle's version., returned: when sent, type: str}
blessed: {description: Whether the new slot was blessed., returned: when sent, type: bool}
version_before: {description: The image version the node ran before., returned: when sent, type: str}
seconds: {description: Seconds from the reboot until the node was back and ready., returned: when waited, type: float}
msg:
  description: On failure, why; a node that came back on its old slot says which slot and version it
    runs and the node's recorded outcome and reason (e.g. C(slot B used its boot tries)).
  returned: failure
  type: str
reason:
  description: When the node came back on its old slot, its recorded reason (UpgradeStatus.last); else the node's reason for a refusal.
  returned: failure
  type: str
outcome:
  description: When the node came back on its old slot, its recorded outcome (C(UPGRADE_OUTCOME_ROLLED_BACK)).
  returned: failure
  type: str
code: {description: "C(rolled_back), or the node's Connect code for a refusal.", returned: failure, type: str}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.machined.fleet.plugins.module_utils.common import (
    client_factory,
    connection_args,
    run,
)
from ansible_collections.machined.fleet.plugins.module_utils.upgrade import (
    REBOOT_MODES,
    run_upgrade,
)


def upgrade(module):
    return run_upgrade(client_factory(module.params), module.params, module.check_mode)


def main():
    module = AnsibleModule(
        argument_spec=connection_args(
            src={"type": "path"},
            from_url={"type": "str"},
            version={"type": "str"},
            stage={"type": "bool", "default": False},
            force={"type": "bool", "default": False},
            reboot_mode={"type": "str", "default": "default", "choices": list(REBOOT_MODES)},
            wait_timeout={"type": "float", "default": 900.0},
        ),
        mutually_exclusive=[("src", "from_url")],
        required_one_of=[("src", "from_url")],
        supports_check_mode=True,
    )
    run(module, upgrade)


if __name__ == "__main__":
    main()
