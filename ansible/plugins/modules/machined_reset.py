#!/usr/bin/python
"""machined_reset: wipe STATE and EPHEMERAL with the node's consent
challenge, as `machinectl reset` does: ask first (what would be wiped and a
challenge bound to this boot), then echo the challenge back to wipe."""

from __future__ import annotations

DOCUMENTATION = r"""
module: machined_reset
short_description: Reset a machined node (wipe STATE and EPHEMERAL) with its consent challenge
description:
  - First calls Reset without a challenge - the node answers the partitions it would wipe and a challenge
    bound to this boot; nothing changes. Check mode stops there and returns them.
  - With I(confirm=true), echoes the challenge to wipe, then waits until the node is back (or gone with
    I(power_off)). Without it the task fails listing what would be wiped.
extends_documentation_fragment: [machined.fleet.connection]
options:
  confirm:
    description: Really wipe. Required, as C(machinectl reset --yes).
    type: bool
    default: false
  mode:
    description: C(graceful) stops services with their grace periods, C(forced) kills them.
    type: str
    choices: [graceful, forced]
    default: graceful
  power_off:
    description: Power off afterwards instead of rebooting.
    type: bool
    default: false
  wait:
    description: Wait until the node is back (or gone).
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait.
    type: float
    default: 900
author: machined maintainers (@machined)
"""

EXAMPLES = r"""
- machined.fleet.machined_reset:
    confirm: true
"""

RETURN = r"""
partitions: {description: What is (or would be) wiped., returned: always, type: list}
boot_id: {description: Boot id after the reset., returned: when waited for a reboot, type: str}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.machined.fleet.plugins.module_utils.common import (
    client_factory,
    connection_args,
    run,
)
from ansible_collections.machined.fleet.plugins.module_utils.reset import MODES, run_reset


def reset(module):
    return run_reset(client_factory(module.params), module.params, module.check_mode)


def main():
    module = AnsibleModule(
        argument_spec=connection_args(
            confirm={"type": "bool", "default": False},
            mode={"type": "str", "default": "graceful", "choices": list(MODES)},
            power_off={"type": "bool", "default": False},
            wait={"type": "bool", "default": True},
            wait_timeout={"type": "float", "default": 900.0},
        ),
        supports_check_mode=True,
    )
    run(module, reset)


if __name__ == "__main__":
    main()
