"""Reboot and shutdown: nothing sent in check mode, the node's refusal fails
the task, a connection lost with the request is left to the wait, and the
wait is bound to the boot id read before."""

from __future__ import annotations

import unittest

import support  # noqa: F401  pylint: disable=unused-import
from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    ConnectError,
    TransportError,
)
from ansible_collections.machined.fleet.plugins.module_utils.power import run_power


class Node:
    def __init__(self, fail=None):
        self.calls = []
        self.fail = fail

    def connect(self):
        return self

    def unary(self, method, body=None, timeout=None):
        self.calls.append((method, body))
        if method == "Version":
            return {"bootId": "boot-1"}
        if self.fail:
            raise self.fail
        return {}


def params(**kw):
    return {"state": "rebooted", "reboot_mode": "default", "wait": True, "wait_timeout": 60.0, **kw}


def back(c, old, t):
    return {"bootId": f"after-{old}", "seconds": 2.5}


class PowerTest(unittest.TestCase):
    def test_check_mode_sends_nothing(self):
        node = Node()
        self.assertTrue(run_power(node.connect, params(), True)["changed"])
        self.assertEqual([method for method, _body in node.calls], ["Version"])

    def test_reboot_waits_for_a_boot_after_the_one_read_first(self):
        node = Node()
        r = run_power(node.connect, params(reboot_mode="kexec"), False, (back, None))
        self.assertEqual(node.calls[1], ("Reboot", {"mode": "REBOOT_MODE_KEXEC"}))
        self.assertEqual((r["boot_id_before"], r["boot_id"]), ("boot-1", "after-boot-1"))

    def test_a_refusal_fails_but_a_lost_connection_is_left_to_the_wait(self):
        refused = Node(ConnectError("Reboot", "permission_denied", "os:reader may not Reboot"))
        with self.assertRaisesRegex(ConnectError, "permission_denied"):
            run_power(refused.connect, params(), False, (back, None))
        lost = Node(TransportError("n:1", "unreachable", "closed"))
        r = run_power(lost.connect, params(state="shutdown"), False, (None, lambda c, t: 11.0))
        self.assertEqual(lost.calls[1], ("Shutdown", {}))
        self.assertEqual(r["seconds"], 11.0)


if __name__ == "__main__":
    unittest.main()
