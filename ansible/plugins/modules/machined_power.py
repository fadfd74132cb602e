#!/usr/bin/python
"""machined_power: reboot or shut a node down, and wait until it is back
(a new boot id, MachineStatus ready) or gone."""

from __future__ import annotations

DOCUMENTATION = r"""
module: machined_power
short_description: Reboot or shut down a machined node and wait for it
description:
  - Reads the boot id, calls Reboot or Shutdown, then waits - for a reboot until the node answers with
    another boot id and says ready; for a shutdown until its API has been silent for 10 s.
  - Always C(changed) (check mode - changed, nothing sent).
extends_documentation_fragment: [machined.fleet.connection]
options:
  state:
    description: C(rebooted) or C(shutdown).
    type: str
    choices: [rebooted, shutdown]
    default: rebooted
  reboot_mode:
    description: C(default) (a cold reboot), C(kexec) or C(powercycle).
    type: str
    choices: [default, kexec, powercycle]
    default: default
  wait:
    description: Wait until the node is back (or gone).
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait.
    type: float
    default: 600
author: machined maintainers (@machined)
"""

EXAMPLES = r"""
- machined.fleet.machined_power:
    state: rebooted
    wait_timeout: 300
"""

RETURN = r"""
boot_id_before: {description: Boot id before., returned: always, type: str}
boot_id: {description: Boot id after a reboot., returned: when waited, type: str}
seconds: {description: Seconds until back (or gone)., returned: when waited, type: float}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.machined.fleet.plugins.module_utils.common import (
    client_factory,
    connection_args,
    run,
)
from ansible_collections.machined.fleet.plugins.module_utils.power import REBOOT_MODES, run_power


def power(module):
    return run_power(client_factory(module.params), module.params, module.check_mode)


def main():
    module = AnsibleModule(
        argument_spec=connection_args(
            state={"type": "str", "default": "rebooted", "choices": ["rebooted", "shutdown"]},
            reboot_mode={"type": "str", "default": "default", "choices": list(REBOOT_MODES)},
            wait={"type": "bool", "default": True},
            wait_timeout={"type": "float", "default": 600.0},
        ),
        supports_check_mode=True,
    )
    run(module, power)


if __name__ == "__main__":
    main()
