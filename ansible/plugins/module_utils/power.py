"""Reboot and shutdown with a wait, as `machinectl reboot --wait` does: the
boot id is read first, so "back" means a new boot however fast it was, and a
node that drops the connection before answering the request has not failed
(the wait decides)."""

from __future__ import annotations

from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    ConnectError,
    MachinedError,
)
from ansible_collections.machined.fleet.plugins.module_utils.node import wait_back, wait_gone

REBOOT_MODES = {"default": "REBOOT_MODE_UNSPECIFIED", "kexec": "REBOOT_MODE_KEXEC",
                "powercycle": "REBOOT_MODE_POWERCYCLE"}


def run_power(connect, p: dict, check_mode: bool, waits=(wait_back, wait_gone)) -> dict:
    """The module's work. @raises MachinedError: the node's refusal (e.g.
    permission_denied for a reader), or a wait that timed out"""
    client = connect()
    before = client.unary("Version").get("bootId", "")
    result = {"changed": True, "boot_id_before": before}
    if check_mode:
        return result
    try:
        if p["state"] == "rebooted":
            client.unary("Reboot", {"mode": REBOOT_MODES[p["reboot_mode"]]})
        else:
            client.unary("Shutdown", {})
    except MachinedError as e:
        refused = isinstance(e, ConnectError) and e.code != "unavailable"
        if refused or not p["wait"]:
            raise
    if not p["wait"]:
        return result
    back, gone = waits
    if p["state"] == "rebooted":
        came = back(connect, before, p["wait_timeout"])
        result.update(boot_id=came.get("bootId", ""), seconds=came["seconds"])
    else:
        result["seconds"] = gone(connect, p["wait_timeout"])
    return result
