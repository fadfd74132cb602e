"""The upgrade module's work, apart from AnsibleModule so it is tested alone:
the UpgradeRequest messages of a bundle file, the send and the waits, and
what a node's state after the reboot means (blessed, still on trial, rolled
back). A rollback raises UpgradeFailed with the node's reason, which fails
the host: in a play with `serial: 1` and `max_fail_percentage: 0` the play
stops there and the later batches are never touched."""

from __future__ import annotations

import base64
import time

from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    MachinedError,
    UpgradeFailed,
    WaitTimeout,
)
from ansible_collections.machined.fleet.plugins.module_utils.node import get_spec, wait_back

__all__ = ["UpgradeFailed", "bundle_messages", "judge", "run_upgrade", "wait_blessed"]

# 1 MiB of bundle per message, as machinectl sends (base64 keeps it under the 4 MiB limit).
CHUNK_BYTES = 1024 * 1024

REBOOT_MODES = {"default": "REBOOT_MODE_UNSPECIFIED", "kexec": "REBOOT_MODE_KEXEC",
                "powercycle": "REBOOT_MODE_POWERCYCLE"}


def bundle_messages(path: str, first: dict, chunk_bytes: int = CHUNK_BYTES):
    """UpgradeRequest messages: `first`'s fields on the first one, the file's
    bytes (base64, as Connect JSON spells bytes) in chunks. Read lazily."""
    with open(path, "rb") as f:
        head = True
        while True:
            data = f.read(chunk_bytes)
            if not data and not head:
                return
            msg = {"chunk": base64.b64encode(data).decode("ascii")}
            yield {**first, **msg} if head else msg
            head = False


def slot_state(upgrade_status: dict, slot: str) -> str:
    for s in upgrade_status.get("slots", []):
        if s.get("slot") == slot:
            return s.get("state", "")
    return ""


# How long a node that came back on another slot is given to publish why (its UpgradeStatus
# names the outcome once it has read STATE's upgrade record, which can come after ready; until
# then it says UPGRADE_OUTCOME_UNKNOWN, or NONE on a node from before 2026-12-07).
SETTLE_S = 60.0

# Outcomes that say what became of the armed slot.
DECIDED = ("UPGRADE_OUTCOME_ROLLED_BACK", "UPGRADE_OUTCOME_UPGRADED", "UPGRADE_OUTCOME_REFUSED")


def fell_back(version: dict, want_slot: str, want_version: str) -> bool:
    """The node runs another slot or version than the one it was sent."""
    return version.get("slot") != want_slot or bool(
        want_version and version.get("imageVersion") != want_version)


def judge(version: dict, status: dict | None, want_slot: str, want_version: str,
          settled: bool = True) -> str:
    """`blessed`, `trial` (not yet), `settling` (back on another slot, its
    outcome not published yet, and `settled` false) or raises UpgradeFailed
    when the node came back on another slot or version (the loader fell back,
    or a rollback)."""
    last = (status or {}).get("last", {})
    if fell_back(version, want_slot, want_version):
        if not settled and last.get("outcome") not in DECIDED:
            return "settling"
        raise UpgradeFailed(
            f"the node came back on slot {version.get('slot') or '?'} version "
            f"{version.get('imageVersion') or '?'}, not slot {want_slot} version {want_version}: "
            f"rolled back ({last.get('outcome', '?')}: "
            f"{last.get('reason') or 'no reason recorded'})",
            last.get("outcome", ""), last.get("reason", ""))
    if last.get("outcome") == "UPGRADE_OUTCOME_ROLLED_BACK":
        raise UpgradeFailed(f"rolled back: {last.get('reason', '')}", last["outcome"],
                            last.get("reason", ""))
    state = slot_state(status or {}, want_slot)
    return "blessed" if state == "UPGRADE_SLOT_STATE_BLESSED" else "trial"


def wait_blessed(connect, want_slot: str, want_version: str, timeout: float, poll: float = 2.0,
                 clock=time.monotonic, sleep=time.sleep, settle: float = SETTLE_S) -> dict:
    """Polls Version and UpgradeStatus until the new slot is blessed. A node
    back on another slot is given up to `settle` seconds (within `timeout`)
    to publish the outcome, so the failure carries its reason.
    @raises UpgradeFailed on a rollback, WaitTimeout when still on trial."""
    start = clock()
    since = None
    last = "no answer"
    while clock() - start < timeout:
        try:
            client = connect()
            v = client.unary("Version", {}, timeout=5)
            status = get_spec(client, "UpgradeStatus", "upgrade")
            if fell_back(v, want_slot, want_version) and since is None:
                since = clock()
            settled = since is not None and (clock() - since >= settle or
                                             clock() - start + poll >= timeout)
            verdict = judge(v, status, want_slot, want_version, settled)
            if verdict == "blessed":
                return {"version": v, "upgrade_status": status}
            last = ("back on another slot, its outcome not published yet"
                    if verdict == "settling" else "on trial, not blessed yet")
        except UpgradeFailed:
            raise
        except MachinedError as e:
            last = str(e)
        sleep(poll)
    raise WaitTimeout(f"slot {want_slot} was not blessed within {timeout:g} s (last: {last})")


def run_upgrade(connect, p: dict, check_mode: bool, waits=None) -> dict:
    """The module's work: skip a node already on `version`, send the bundle
    (or its URL), then, when the node reboots into the new slot, wait until
    it is back with a new boot id and the slot is blessed. `waits` replaces
    (wait_back, wait_blessed) in tests.
    @raises UpgradeFailed when the node came back on its old slot (with the
    node's outcome and reason), ConnectError when it refused the bundle,
    WaitTimeout when it did not come back or stayed on trial"""
    back, blessed = waits or (wait_back, wait_blessed)
    client = connect()
    before = client.unary("Version")
    if p.get("version") and before.get("imageVersion") == p["version"]:
        return {"changed": False, "image_version": p["version"], "slot": before.get("slot", "")}
    if check_mode:
        return {"changed": True}
    first = {"stage": p["stage"], "force": p["force"], "rebootMode": REBOOT_MODES[p["reboot_mode"]]}
    if p.get("from_url"):
        messages = iter([{**first, "fromUrl": p["from_url"]}])
    else:
        messages = bundle_messages(p["src"], first)
    r = client.client_stream("Upgrade", messages, timeout=max(p["wait_timeout"], p["timeout"]))
    result = {"changed": True, "slot": r.get("slot", ""), "image_version": r.get("version", ""),
              "entry": r.get("entry", ""), "key_id": r.get("keyId", ""), "blessed": False,
              "version_before": before.get("imageVersion", ""), "slot_before": before.get("slot", "")}
    if not r.get("rebooting"):
        return result
    came = back(connect, r.get("bootId") or before.get("bootId", ""), p["wait_timeout"])
    done = blessed(connect, result["slot"], result["image_version"], p["wait_timeout"])
    result.update(blessed=True, boot_id=came.get("bootId", ""), seconds=came.get("seconds"),
                  upgrade_status=done["upgrade_status"])
    return result
