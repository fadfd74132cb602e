"""The reset's consent, as `machinectl reset` does it (machinectl/commands/
reset.ts): ask first without a challenge (the node answers what it would wipe
and a challenge bound to this boot, changing nothing), then echo that
challenge back to wipe. Consent is the node's to check; this only never
sends a challenge it was not given, and never without `confirm`."""

from __future__ import annotations

from ansible_collections.machined.fleet.plugins.module_utils.errors import MachinedError
from ansible_collections.machined.fleet.plugins.module_utils.node import wait_back, wait_gone

MODES = {"graceful": "RESET_MODE_GRACEFUL", "forced": "RESET_MODE_FORCED"}


def describe(parts: list) -> str:
    """The partitions as the task's message names them."""
    return ", ".join(f"{p.get('label')} ({p.get('disk')} #{p.get('number')}, {p.get('guid')})"
                     for p in parts) or "nothing recorded"


def run_reset(connect, p: dict, check_mode: bool, waits=(wait_back, wait_gone)) -> dict:
    """The module's work: preview, then (confirmed, not check mode) wipe and
    wait. @raises MachinedError naming what would be wiped when not confirmed"""
    client = connect()
    preview = client.unary("Reset", {})
    parts = preview.get("partitions", [])
    result = {"changed": True, "partitions": parts, "boot_id_before": preview.get("bootId", "")}
    if check_mode:
        return result
    if not p["confirm"]:
        raise MachinedError(f"reset would wipe {describe(parts)}; set confirm=true to wipe")
    r = client.unary("Reset", {"challenge": preview.get("challenge", ""), "mode": MODES[p["mode"]],
                               "powerOff": p["power_off"]})
    if not r.get("accepted"):
        raise MachinedError(f"the node did not accept the reset (step {r.get('progress') or '?'})")
    if not p["wait"]:
        return result
    back, gone = waits
    if p["power_off"]:
        result["seconds"] = gone(connect, p["wait_timeout"])
    else:
        came = back(connect, preview.get("bootId", ""), p["wait_timeout"])
        result.update(boot_id=came.get("bootId", ""), seconds=came["seconds"])
    return result
