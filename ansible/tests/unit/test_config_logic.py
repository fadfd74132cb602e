"""machined_config's decisions: RFC 7386 merge patches (the RFC's own
examples), `changed` from the node's hashes only, and the diff passed on."""

from __future__ import annotations

import unittest

# support puts the collection on sys.path.
import support  # noqa: F401  pylint: disable=unused-import
from ansible_collections.machined.fleet.plugins.module_utils.config_logic import (
    PatchError,
    ansible_diff,
    desired_document,
    differs,
    merge_patch,
    summary,
)
from ansible_collections.machined.fleet.plugins.module_utils.errors import MachinedError


class MergePatchTest(unittest.TestCase):
    def test_rfc7386_appendix_a(self):
        cases = [
            ({"a": "b"}, {"a": "c"}, {"a": "c"}),
            ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
            ({"a": "b"}, {"a": None}, {}),
            ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
            ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
            ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
            ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
            ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
            (["a", "b"], ["c", "d"], ["c", "d"]),
            ({"a": "b"}, ["c"], ["c"]),
            ({"a": "foo"}, None, None),
            ({"a": "foo"}, "bar", "bar"),
            ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
            ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
            ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        ]
        for target, patch, want in cases:
            with self.subTest(target=target, patch=patch):
                self.assertEqual(merge_patch(target, patch), want)

    def test_inputs_are_not_changed(self):
        base = {"machine": {"hostname": "a", "network": {"x": 1}}}
        desired_document(base, [{"machine": {"hostname": "b", "network": None}}])
        self.assertEqual(base, {"machine": {"hostname": "a", "network": {"x": 1}}})

    def test_patches_apply_in_order_and_must_be_mappings(self):
        doc = desired_document({"machine": {"hostname": "a"}},
                               [{"machine": {"hostname": "b"}}, {"machine": {"hostname": "c"}}])
        self.assertEqual(doc, {"machine": {"hostname": "c"}})
        with self.assertRaises(PatchError):
            desired_document({"m": 1}, [["op"]])
        with self.assertRaises(PatchError):
            desired_document("text", [])


class ChangedTest(unittest.TestCase):
    def test_changed_only_when_the_hashes_differ(self):
        self.assertFalse(differs({"currentSha256": "aa", "requestedSha256": "aa",
                                  "diff": "- a\n+ a (changed, redacted)"}))
        self.assertTrue(differs({"currentSha256": "aa", "requestedSha256": "bb"}))
        self.assertTrue(differs({"currentSha256": "", "requestedSha256": "bb"}))
        with self.assertRaises(MachinedError):
            differs({"currentSha256": "aa"})

    def test_diff_and_summary_carry_the_nodes_answer(self):
        dry = {"diff": "--- in force\n+++ requested\n", "currentSha256": "a" * 64,
               "requestedSha256": "b" * 64, "changed": ["machine.hostname"],
               "domains": ["network"], "mode": "APPLY_MODE_NO_REBOOT"}
        d = ansible_diff(dry, "10.0.0.1:50000")
        self.assertEqual(d["prepared"], dry["diff"])
        self.assertIn("10.0.0.1:50000", d["before_header"])
        s = summary(dry)
        self.assertEqual((s["changed_fields"], s["domains"], s["reboots"]),
                         (["machine.hostname"], ["network"], False))


if __name__ == "__main__":
    unittest.main()
