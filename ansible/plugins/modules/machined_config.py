#!/usr/bin/python
"""machined_config: put a machine config in force, idempotently, with the
node's own dry run as check mode and its diff as Ansible's diff."""

from __future__ import annotations

DOCUMENTATION = r"""
module: machined_config
short_description: Apply a machine config to a machined node (check mode is the node's dry run)
description:
  - Builds the config from I(src) or I(content) plus I(patches) (RFC 7386 merge patches, applied on the controller).
  - Always asks the node first with ApplyConfiguration C(dry_run) - the node validates it exactly as an apply,
    and answers its diff and both configs' SHA-256. The task is C(changed) only when the hashes differ.
  - In check mode nothing else is sent; otherwise the config is applied with I(apply_mode).
  - The diff is the node's, rendered with secrets redacted by the node.
extends_documentation_fragment: [machined.fleet.connection]
options:
  src:
    description: A machine config file on the controller (mutually exclusive with I(content)).
    type: path
  content:
    description: The machine config text, e.g. from C(lookup('template', ...)).
    type: str
  patches:
    description: RFC 7386 merge patches applied in order (C(null) deletes a key).
    type: list
    elements: dict
    default: []
  apply_mode:
    description: How the node puts it in force.
    type: str
    choices: [auto, no_reboot, reboot, staged, try]
    default: auto
  try_timeout_ms:
    description: With C(try), how long before the node reverts unless confirmed.
    type: int
    default: 0
  wait:
    description: When the apply reboots the node, wait until it is back and ready.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for the node after a reboot.
    type: float
    default: 600
author: machined maintainers (@machined)
"""

EXAMPLES = r"""
- machined.fleet.machined_config:
    content: "{{ lookup('template', 'machine.yaml.j2') }}"
    patches:
      - machine: {hostname: "{{ inventory_hostname_short }}"}
"""

RETURN = r"""
changed_fields: {description: Dotted paths the change touches., returned: always, type: list}
domains: {description: Domains the change touches., returned: always, type: list}
reboots: {description: Whether the apply reboots (would reboot) the node., returned: always, type: bool}
current_sha256: {description: Hash of the config in force before., returned: always, type: str}
requested_sha256: {description: Hash of the requested config., returned: always, type: str}
applied: {description: Whether the config was put in force by this task., returned: always, type: bool}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.machined.fleet.plugins.module_utils import config_logic
from ansible_collections.machined.fleet.plugins.module_utils.common import (
    client_factory,
    connection_args,
    run,
)
from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    ConnectError,
    MachinedError,
)
from ansible_collections.machined.fleet.plugins.module_utils.node import wait_back


def config_text(params) -> str:
    """The text to send: as given, or re-rendered when patches apply."""
    if params["src"]:
        try:
            with open(params["src"], encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise MachinedError(f'cannot read src "{params["src"]}": {e.strerror}') from e
    else:
        text = params["content"]
    if not params["patches"]:
        return text
    import yaml  # ansible-core's own dependency

    try:
        base = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise MachinedError(f"the machine config is not YAML: {e}") from e
    doc = config_logic.desired_document(base, params["patches"])
    return yaml.safe_dump(doc, sort_keys=False)


def apply(module):
    p = module.params
    connect = client_factory(p)
    client = connect()
    text = config_text(p)
    mode = config_logic.APPLY_MODES[p["apply_mode"]]
    request = {"configYaml": text, "mode": mode, "tryTimeoutMs": p["try_timeout_ms"]}
    dry = client.unary("ApplyConfiguration", {**request, "dryRun": True})
    changed = config_logic.differs(dry)
    result = {"changed": changed, "applied": False, **config_logic.summary(dry)}
    if changed and module._diff:
        result["diff"] = config_logic.ansible_diff(dry, client.endpoint)
    if dry.get("refusal"):
        raise ConnectError("ApplyConfiguration", "failed_precondition", dry["refusal"])
    if not changed or module.check_mode:
        return result
    boot_id = client.unary("Version").get("bootId", "")
    applied = client.unary("ApplyConfiguration", request)
    result.update(applied=bool(applied.get("applied")), mode=applied.get("mode", ""),
                  reboots=bool(applied.get("reboots")))
    if result["reboots"] and p["wait"]:
        back = wait_back(connect, boot_id, p["wait_timeout"])
        result.update(boot_id=back.get("bootId"), wait_seconds=back["seconds"])
    return result


def main():
    module = AnsibleModule(
        argument_spec=connection_args(
            src={"type": "path"},
            content={"type": "str"},
            patches={"type": "list", "elements": "dict", "default": []},
            apply_mode={"type": "str", "default": "auto",
                        "choices": list(config_logic.APPLY_MODES)},
            try_timeout_ms={"type": "int", "default": 0},
            wait={"type": "bool", "default": True},
            wait_timeout={"type": "float", "default": 600.0},
        ),
        mutually_exclusive=[("src", "content")],
        required_one_of=[("src", "content")],
        supports_check_mode=True,
    )
    run(module, apply)


if __name__ == "__main__":
    main()
