"""Reading machinectl's client config as machinectl does."""

from __future__ import annotations

import base64
import os
import tempfile
import unittest

import support  # noqa: F401  pylint: disable=unused-import
from ansible_collections.machined.fleet.plugins.module_utils import client_config as cc
from ansible_collections.machined.fleet.plugins.module_utils.errors import ClientConfigError

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
B64 = base64.b64encode(PEM.encode()).decode()
TEXT = f"""context: one
contexts:
  one:
    endpoints: ["10.0.0.1"]
    ca: {B64}
    crt: {B64}
    key: {B64}
  two:
    endpoints: []
    ca: {B64}
    crt: {B64}
    key: bm90IGEgcGVt
"""


class ClientConfigTest(unittest.TestCase):
    def test_path_in_machinectls_order(self):
        home = "/home/u"
        self.assertEqual(cc.resolve_path("/f", {"MACHINECTL_CONFIG": "/m"}, home), "/f")
        self.assertEqual(cc.resolve_path(None, {"MACHINECTL_CONFIG": "/m"}, home), "/m")
        self.assertEqual(cc.resolve_path(None, {"XDG_CONFIG_HOME": "/x"}, home),
                         "/x/machinectl/config.yaml")
        self.assertEqual(cc.resolve_path(None, {"XDG_CONFIG_HOME": "rel"}, home),
                         "/home/u/.config/machinectl/config.yaml")

    def test_current_and_named_contexts(self):
        doc = cc.parse(TEXT, "t")
        one = cc.credentials(doc, None)
        self.assertEqual((one["name"], one["endpoints"], one["ca_pem"]), ("one", ["10.0.0.1"], PEM))
        with self.assertRaisesRegex(ClientConfigError, 'no context "three".*"one", "two"'):
            cc.credentials(doc, "three")
        with self.assertRaisesRegex(ClientConfigError, "key is not base64 of a PEM"):
            cc.credentials(doc, "two")
        with self.assertRaisesRegex(ClientConfigError, "no context is selected"):
            cc.credentials({"contexts": {}}, None)

    def test_missing_and_malformed_files(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(ClientConfigError, "no client config at"):
                cc.load(os.path.join(d, "none.yaml"))
            bad = os.path.join(d, "bad.yaml")
            with open(bad, "w") as f:
                f.write("contexts: [1, 2")
            with self.assertRaisesRegex(ClientConfigError, "cannot parse"):
                cc.load(bad)

    def test_default_port(self):
        self.assertEqual(cc.with_default_port("10.0.0.1"), "10.0.0.1:50000")
        self.assertEqual(cc.with_default_port("n:1"), "n:1")
        self.assertEqual(cc.with_default_port("fd00::1"), "[fd00::1]:50000")
        self.assertEqual(cc.with_default_port("[fd00::1]:7"), "[fd00::1]:7")
        self.assertEqual(cc.host_port("[fd00::1]:7"), ("fd00::1", 7))


if __name__ == "__main__":
    unittest.main()
