"""The reset's two phases against a recording node: the challenge is only
ever the one the node gave, nothing is wiped in check mode or without
confirm, and the wait is bound to the preview's boot."""

from __future__ import annotations

import unittest

import support  # noqa: F401  pylint: disable=unused-import
from ansible_collections.machined.fleet.plugins.module_utils.errors import MachinedError
from ansible_collections.machined.fleet.plugins.module_utils.reset import run_reset

PREVIEW = {"partitions": [{"label": "STATE", "disk": "/dev/vda", "number": 5, "guid": "g5"}],
           "challenge": "c-123", "bootId": "boot-1"}


class Node:
    def __init__(self, accepted=True):
        self.calls = []
        self.accepted = accepted

    def connect(self):
        return self

    def unary(self, method, body=None, timeout=None):
        self.calls.append((method, body))
        return PREVIEW if not body else {"accepted": self.accepted}


def params(**kw):
    return {"confirm": True, "mode": "graceful", "power_off": False, "wait": True,
            "wait_timeout": 60.0, **kw}


class ResetTest(unittest.TestCase):
    def test_check_mode_only_asks(self):
        node = Node()
        r = run_reset(node.connect, params(), True)
        self.assertEqual(node.calls, [("Reset", {})])
        self.assertEqual(r["partitions"], PREVIEW["partitions"])

    def test_without_confirm_nothing_is_wiped_and_the_message_names_it(self):
        node = Node()
        with self.assertRaisesRegex(MachinedError, r"would wipe STATE \(/dev/vda #5, g5\)"):
            run_reset(node.connect, params(confirm=False), False)
        self.assertEqual(len(node.calls), 1)

    def test_confirmed_echoes_the_challenge_and_waits_for_a_new_boot(self):
        node = Node()
        waited = []

        def back(_conn, old, _timeout):
            waited.append(old)
            return {"bootId": "boot-2", "seconds": 3.0}

        r = run_reset(node.connect, params(mode="forced"), False, (back, None))
        self.assertEqual(node.calls[1], ("Reset", {"challenge": "c-123", "mode": "RESET_MODE_FORCED",
                                                   "powerOff": False}))
        self.assertEqual((waited, r["boot_id"]), (["boot-1"], "boot-2"))

    def test_power_off_waits_until_gone_and_a_refusal_fails(self):
        node = Node()
        r = run_reset(node.connect, params(power_off=True), False, (None, lambda c, t: 12.0))
        self.assertEqual(r["seconds"], 12.0)
        with self.assertRaisesRegex(MachinedError, "did not accept"):
            run_reset(Node(accepted=False).connect, params(), False)


if __name__ == "__main__":
    unittest.main()
