"""What several modules ask a node: its version, a resource, readiness, and
waiting through a reboot by the boot id (as `machinectl reboot --wait`
does: the boot id changes on every boot, so a node that answers with a new
one has been through a reboot, however fast)."""

from __future__ import annotations

import time

from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    MachinedError,
    WaitTimeout,
)


def get_spec(client, rtype: str, rid: str, namespace: str = "") -> dict | None:
    """The spec of one resource (the oneof's value), or None when it is absent."""
    res = client.unary("Get", {"type": rtype, "id": rid, "namespace": namespace}).get("resource")
    return resource_spec(res) if res else None


def resource_spec(res: dict) -> dict:
    """A Resource's spec: the one key beside `metadata`."""
    return next((v for k, v in res.items() if k != "metadata"), {})


def is_ready(client) -> bool:
    """MachineStatus says ready."""
    spec = get_spec(client, "MachineStatus", "machine") or {}
    return bool(spec.get("ready"))


def wait_back(connect, old_boot_id: str, timeout: float, poll: float = 1.0,
              clock=time.monotonic, sleep=time.sleep) -> dict:
    """Waits until a fresh connection (`connect()`) answers Version with a boot
    id other than `old_boot_id` and MachineStatus is ready; returns Version's
    answer with `seconds`. @raises WaitTimeout naming the last failure seen."""
    start = clock()
    last = "no answer yet"
    while clock() - start < timeout:
        try:
            client = connect()
            v = client.unary("Version", {}, timeout=5)
            if v.get("bootId") and v.get("bootId") != old_boot_id:
                if is_ready(client):
                    return {**v, "seconds": round(clock() - start, 1)}
                last = "back with a new boot id, not ready yet"
            else:
                last = "still on the old boot"
        except MachinedError as e:
            last = str(e)
        sleep(poll)
    raise WaitTimeout(f"the node was not back and ready within {timeout:g} s (last: {last})")


def wait_gone(connect, timeout: float, quiet_for: float = 10.0, poll: float = 1.0,
              clock=time.monotonic, sleep=time.sleep) -> float:
    """Waits until the API stays unreachable for `quiet_for` seconds (a
    shutdown); returns the seconds until it went quiet. @raises WaitTimeout"""
    start = clock()
    since = None
    while clock() - start < timeout:
        try:
            connect().unary("Version", {}, timeout=5)
            since = None
        except MachinedError:
            since = since if since is not None else clock()
            if clock() - since >= quiet_for:
                return round(since - start, 1)
        sleep(poll)
    raise WaitTimeout(f"the node still answered after {timeout:g} s")
