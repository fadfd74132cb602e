"""The upgrade module's work (run_upgrade) against a fake node and fake
waits: nothing sent in check mode or to a node already on the version, the
bundle streamed with the options first, a blessed slot reported, and a node
that came back on its old slot failing the host with the node's reason (what
stops a `serial: 1`, `max_fail_percentage: 0` play at that node)."""

from __future__ import annotations

import base64
import os
import tempfile
import unittest

import support  # noqa: F401  pylint: disable=unused-import
from ansible_collections.machined.fleet.plugins.module_utils.common import failure
from ansible_collections.machined.fleet.plugins.module_utils.errors import ConnectError
from ansible_collections.machined.fleet.plugins.module_utils.upgrade import (
    UpgradeFailed,
    run_upgrade,
    wait_blessed,
)

ROLLED_BACK = "UPGRADE_OUTCOME_ROLLED_BACK"
TRIES = "slot B used its boot tries (3) without being blessed"


class Node:
    """One node: Version and Get answer from `state`, Upgrade records the
    messages and answers `answer` (or raises it when an error)."""

    def __init__(self, answer=None, version="1.0.0", slot="A"):
        self.state = {"Version": {"imageVersion": version, "slot": slot, "bootId": "boot-1"}}
        self.answer = answer if answer is not None else {
            "slot": "B", "version": "2.0.0", "rebooting": True, "bootId": "boot-1"}
        self.calls = []
        self.sent = []
        self.after = None

    def connect(self):
        return self

    def unary(self, method, body=None, timeout=None):
        self.calls.append(method)
        if method == "Get":
            spec = self.state[f"Get {body['type']}"]
            return {"resource": {"metadata": {}, "spec": spec}}
        return self.state[method]

    def client_stream(self, method, messages, timeout=None):
        self.calls.append(method)
        self.sent = list(messages)
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.after:
            self.state.update(self.after)
        return self.answer

    def reboot_into(self, slot, version, outcome, reason, state):
        """What the node answers once the bundle is in and it rebooted."""
        self.after = {"Version": {"imageVersion": version, "slot": slot, "bootId": "boot-2"}}
        self.after["Get UpgradeStatus"] = {
            "slots": [{"slot": "A", "state": "UPGRADE_SLOT_STATE_BLESSED"},
                      {"slot": "B", "state": state}],
            "last": {"outcome": outcome, "reason": reason}}


def params(src, **kw):
    return {"src": src, "from_url": None, "version": "2.0.0", "stage": False, "force": False,
            "reboot_mode": "default", "wait_timeout": 60.0, "timeout": 30.0, **kw}


def back(connect, old, timeout):
    v = connect().unary("Version")
    assert v["bootId"] != old
    return {**v, "seconds": 42.0}


def blessed(connect, slot, version, timeout):
    # The real wait, with a clock that never sleeps.
    t = [0.0]
    return wait_blessed(connect, slot, version, timeout, clock=lambda: t[0],
                        sleep=lambda s: t.__setitem__(0, t[0] + s))


class UpgradeRunTest(unittest.TestCase):
    def setUp(self):
        fd, self.bundle = tempfile.mkstemp()
        os.write(fd, b"bundle bytes" * 1000)
        os.close(fd)

    def tearDown(self):
        os.unlink(self.bundle)

    def test_check_mode_and_a_node_on_the_version_send_nothing(self):
        node = Node()
        self.assertEqual(run_upgrade(node.connect, params(self.bundle), True), {"changed": True})
        on_it = Node(version="2.0.0", slot="B")
        r = run_upgrade(on_it.connect, params(self.bundle), False, (back, blessed))
        self.assertEqual((r["changed"], r["slot"]), (False, "B"))
        self.assertNotIn("Upgrade", node.calls + on_it.calls)

    def test_a_blessed_slot_is_reported_with_the_time_back(self):
        node = Node()
        node.reboot_into("B", "2.0.0", "UPGRADE_OUTCOME_UPGRADED", "", "UPGRADE_SLOT_STATE_BLESSED")
        r = run_upgrade(node.connect, params(self.bundle, reboot_mode="kexec"), False,
                        (back, blessed))
        self.assertEqual((r["changed"], r["blessed"], r["slot"], r["seconds"]),
                         (True, True, "B", 42.0))
        self.assertEqual((r["version_before"], r["slot_before"]), ("1.0.0", "A"))
        self.assertEqual(node.sent[0]["rebootMode"], "REBOOT_MODE_KEXEC")
        data = b"".join(base64.b64decode(m["chunk"]) for m in node.sent)
        self.assertEqual(data, b"bundle bytes" * 1000)

    def test_a_node_back_on_its_old_slot_fails_the_host_with_its_reason(self):
        node = Node()
        node.reboot_into("A", "1.0.0", ROLLED_BACK, TRIES, "UPGRADE_SLOT_STATE_BAD")
        with self.assertRaises(UpgradeFailed) as cm:
            run_upgrade(node.connect, params(self.bundle), False, (back, blessed))
        f = failure(cm.exception)
        self.assertRegex(f["msg"], r"came back on slot A version 1\.0\.0, not slot B version "
                                   r"2\.0\.0: rolled back .*used its boot tries")
        self.assertEqual((f["code"], f["outcome"], f["reason"]), ("rolled_back", ROLLED_BACK, TRIES))

    def test_a_refused_bundle_fails_without_waiting(self):
        refused = ConnectError("Upgrade", "permission_denied", "unknown-key: not a trusted key")
        node = Node(answer=refused)

        def never(*a):
            raise AssertionError("no wait after a refusal")

        with self.assertRaises(ConnectError) as cm:
            run_upgrade(node.connect, params(self.bundle), False, (never, never))
        self.assertEqual(failure(cm.exception)["reason"], "unknown-key: not a trusted key")

    def test_stage_writes_and_does_not_wait(self):
        node = Node(answer={"slot": "B", "version": "2.0.0", "rebooting": False})

        def never(*a):
            raise AssertionError("no wait when staged")

        r = run_upgrade(node.connect, params(self.bundle, stage=True), False, (never, never))
        self.assertEqual((r["changed"], r["blessed"]), (True, False))
        self.assertIs(node.sent[0]["stage"], True)


if __name__ == "__main__":
    unittest.main()
