"""Waiting through a reboot by the boot id, and judging an upgrade's
outcome, with a scripted node and a fake clock (no sleeping)."""

from __future__ import annotations

import base64
import os
import tempfile
import unittest

import support  # noqa: F401  pylint: disable=unused-import
from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    TransportError,
    WaitTimeout,
)
from ansible_collections.machined.fleet.plugins.module_utils.node import wait_back, wait_gone
from ansible_collections.machined.fleet.plugins.module_utils.upgrade import (
    UpgradeFailed,
    bundle_messages,
    judge,
    wait_blessed,
)


class Clock:
    def __init__(self):
        self.t = 0.0

    def now(self):
        return self.t

    def sleep(self, s):
        self.t += s


class Scripted:
    """connect() for a node whose answers follow `script`: one entry per
    connection, None for unreachable, else {method: answer}."""

    def __init__(self, script):
        self.script = list(script)

    def connect(self):
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        node = self

        class C:
            def unary(self, method, body=None, timeout=None):
                if step is None:
                    raise TransportError("n:1", "refused", "connection refused")
                return step[method] if method != "Get" else {"resource": {
                    "metadata": {}, "spec": step[f"Get {body['type']}"]}}

        node.last = C()
        return node.last


def status(ready):
    return {"Version": {"bootId": "new"}, "Get MachineStatus": {"ready": ready}}


class WaitTest(unittest.TestCase):
    def test_back_needs_a_new_boot_id_and_ready(self):
        clock = Clock()
        node = Scripted([{"Version": {"bootId": "old"}}, None, None, status(False), status(True)])
        r = wait_back(node.connect, "old", 60, clock=clock.now, sleep=clock.sleep)
        self.assertEqual((r["bootId"], r["seconds"]), ("new", 4.0))

    def test_back_times_out_naming_the_last_failure(self):
        clock = Clock()
        node = Scripted([None])
        with self.assertRaisesRegex(WaitTimeout, "within 5 s.*connection refused"):
            wait_back(node.connect, "old", 5, clock=clock.now, sleep=clock.sleep)

    def test_gone_after_ten_quiet_seconds(self):
        clock = Clock()
        node = Scripted([{"Version": {}}, {"Version": {}}] + [None] * 20)
        self.assertEqual(wait_gone(node.connect, 60, clock=clock.now, sleep=clock.sleep), 2.0)


def upgrade_status(state, outcome="UPGRADE_OUTCOME_ARMED", reason=""):
    return {"slots": [{"slot": "A", "state": "UPGRADE_SLOT_STATE_BLESSED"},
                      {"slot": "B", "state": state}],
            "last": {"outcome": outcome, "reason": reason}}


class UpgradeTest(unittest.TestCase):
    def test_judge(self):
        on_b = {"slot": "B", "imageVersion": "0.2.0"}
        self.assertEqual(judge(on_b, upgrade_status("UPGRADE_SLOT_STATE_TRIAL"), "B", "0.2.0"), "trial")
        self.assertEqual(judge(on_b, upgrade_status("UPGRADE_SLOT_STATE_BLESSED",
                                                    "UPGRADE_OUTCOME_UPGRADED"), "B", "0.2.0"),
                         "blessed")
        back_on_a = {"slot": "A", "imageVersion": "0.1.0"}
        with self.assertRaisesRegex(UpgradeFailed, "came back on slot A.*rolled back.*tries used up"):
            judge(back_on_a, upgrade_status("UPGRADE_SLOT_STATE_BAD", "UPGRADE_OUTCOME_ROLLED_BACK",
                                            "tries used up"), "B", "0.2.0")

    def test_wait_blessed_stops_at_a_rollback(self):
        clock = Clock()
        node = Scripted([
            {"Version": {"slot": "B", "imageVersion": "0.2.0"},
             "Get UpgradeStatus": upgrade_status("UPGRADE_SLOT_STATE_TRIAL")},
            {"Version": {"slot": "A", "imageVersion": "0.1.0"},
             "Get UpgradeStatus": upgrade_status("UPGRADE_SLOT_STATE_BAD",
                                                 "UPGRADE_OUTCOME_ROLLED_BACK", "health check")},
        ])
        with self.assertRaises(UpgradeFailed) as cm:
            wait_blessed(node.connect, "B", "0.2.0", 60, clock=clock.now, sleep=clock.sleep)
        self.assertEqual(cm.exception.reason, "health check")

    def test_wait_blessed_waits_for_a_fallback_to_name_its_outcome(self):
        # Back on A before the node has read STATE's record: UNKNOWN (NONE from a node
        # older than 2026-12-07), then its reason.
        clock = Clock()
        back_on_a = {"slot": "A", "imageVersion": "0.1.0"}
        node = Scripted([
            {"Version": back_on_a,
             "Get UpgradeStatus": upgrade_status("UPGRADE_SLOT_STATE_BAD", "UPGRADE_OUTCOME_UNKNOWN")},
            {"Version": back_on_a,
             "Get UpgradeStatus": upgrade_status("UPGRADE_SLOT_STATE_BAD", "UPGRADE_OUTCOME_NONE")},
            {"Version": back_on_a,
             "Get UpgradeStatus": upgrade_status("UPGRADE_SLOT_STATE_BAD",
                                                 "UPGRADE_OUTCOME_ROLLED_BACK", "tries used up")},
        ])
        with self.assertRaisesRegex(UpgradeFailed, "came back on slot A.*ROLLED_BACK: tries used up"):
            wait_blessed(node.connect, "B", "0.2.0", 600, clock=clock.now, sleep=clock.sleep)
        self.assertEqual(clock.t, 4.0)

    def test_wait_blessed_gives_a_fallback_settle_seconds_then_says_no_reason(self):
        clock = Clock()
        node = Scripted([
            {"Version": {"slot": "A", "imageVersion": "0.1.0"},
             "Get UpgradeStatus": upgrade_status("UPGRADE_SLOT_STATE_BAD", "UPGRADE_OUTCOME_NONE")},
        ])
        with self.assertRaisesRegex(UpgradeFailed, "came back on slot A.*NONE: no reason recorded"):
            wait_blessed(node.connect, "B", "0.2.0", 600, clock=clock.now, sleep=clock.sleep,
                         settle=10)
        self.assertEqual(clock.t, 10.0)
        # Never past the overall timeout: the last poll within it judges.
        clock = Clock()
        with self.assertRaisesRegex(UpgradeFailed, "no reason recorded"):
            wait_blessed(node.connect, "B", "0.2.0", 5, clock=clock.now, sleep=clock.sleep)
        self.assertLess(clock.t, 5.0)

    def test_bundle_messages_carry_the_options_first_and_every_byte(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "b")
            data = bytes(range(256)) * 10
            with open(path, "wb") as f:
                f.write(data)
            msgs = list(bundle_messages(path, {"stage": True}, chunk_bytes=1000))
        self.assertEqual(len(msgs), 3)
        self.assertEqual(msgs[0]["stage"], True)
        self.assertNotIn("stage", msgs[1])
        self.assertEqual(b"".join(base64.b64decode(m["chunk"]) for m in msgs), data)


if __name__ == "__main__":
    unittest.main()
