"""The upgrade's pieces that are decisions or streams, apart from the module
so they are tested alone: the UpgradeRequest messages of a bundle file, and
what a node's state after the reboot means (blessed, still on trial, rolled
back)."""

from __future__ import annotations

import base64
import time

from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    MachinedError,
    WaitTimeout,
)
from ansible_collections.machined.fleet.plugins.module_utils.node import get_spec

# 1 MiB of bundle per message, as machinectl sends (base64 keeps it under the 4 MiB limit).
CHUNK_BYTES = 1024 * 1024


class UpgradeFailed(MachinedError):
    """The node did not end up blessed on the new slot; `outcome` and
    `reason` are the node's UpgradeStatus.last."""

    def __init__(self, message: str, outcome: str = "", reason: str = ""):
        self.outcome = outcome
        self.reason = reason
        super().__init__(message)


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


def judge(version: dict, status: dict | None, want_slot: str, want_version: str) -> str:
    """`blessed`, `trial` (not yet) or raises UpgradeFailed when the node came
    back on another slot or version (the loader fell back, or a rollback)."""
    last = (status or {}).get("last", {})
    if version.get("slot") != want_slot or (want_version and
                                            version.get("imageVersion") != want_version):
        raise UpgradeFailed(
            f"the node came back on slot {version.get('slot') or '?'} version "
            f"{version.get('imageVersion') or '?'}, not slot {want_slot} version {want_version}: "
            f"rolled back ({last.get('outcome', '?')}: {last.get('reason', 'no reason recorded')})",
            last.get("outcome", ""), last.get("reason", ""))
    if last.get("outcome") == "UPGRADE_OUTCOME_ROLLED_BACK":
        raise UpgradeFailed(f"rolled back: {last.get('reason', '')}", last["outcome"],
                            last.get("reason", ""))
    state = slot_state(status or {}, want_slot)
    return "blessed" if state == "UPGRADE_SLOT_STATE_BLESSED" else "trial"


def wait_blessed(connect, want_slot: str, want_version: str, timeout: float, poll: float = 2.0,
                 clock=time.monotonic, sleep=time.sleep) -> dict:
    """Polls Version and UpgradeStatus until the new slot is blessed.
    @raises UpgradeFailed on a rollback, WaitTimeout when still on trial."""
    start = clock()
    last = "no answer"
    while clock() - start < timeout:
        try:
            client = connect()
            v = client.unary("Version", {}, timeout=5)
            status = get_spec(client, "UpgradeStatus", "upgrade")
            if judge(v, status, want_slot, want_version) == "blessed":
                return {"version": v, "upgrade_status": status}
            last = "on trial, not blessed yet"
        except UpgradeFailed:
            raise
        except MachinedError as e:
            last = str(e)
        sleep(poll)
    raise WaitTimeout(f"slot {want_slot} was not blessed within {timeout:g} s (last: {last})")
