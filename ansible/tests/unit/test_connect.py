"""The Connect client against a fake node over real TLS: unary JSON, the
client-streaming envelopes, the node's errors with their codes, and each
way a connection fails named (TLS alert, untrusted node, pin, refused)."""

from __future__ import annotations

import hashlib
import json
import socket
import ssl
import unittest

import support
from ansible_collections.machined.fleet.plugins.module_utils.connect import (
    NodeClient,
    normalize_fingerprint,
)
from ansible_collections.machined.fleet.plugins.module_utils.common import failure
from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    ConnectError,
    TransportError,
)
from ansible_collections.machined.fleet.plugins.module_utils.stream import (
    envelope,
    parse_envelopes,
)

PKI = support.make_pki("node")
OTHER = support.make_pki("other")


def client(endpoint, pki=None, ca=None, **kw):
    pki = pki or PKI
    return NodeClient(endpoint, ca or PKI["ca.crt"], pki["client.crt"], pki["client.key"],
                      timeout=5, **kw)


class ConnectTest(unittest.TestCase):
    def setUp(self):
        self.node = support.FakeNode(PKI)
        self.addCleanup(self.node.close)

    def test_unary_sends_json_and_returns_the_answer(self):
        seen = {}

        def version(body, headers):
            seen.update(body=json.loads(body), ctype=headers["Content-Type"],
                        proto=headers["Connect-Protocol-Version"])
            return 200, "application/json", b'{"version":"0.1.0","bootId":"b1"}'

        self.node.handlers["Version"] = version
        got = client(self.node.endpoint).unary("Version", {"x": 1})
        self.assertEqual(got, {"version": "0.1.0", "bootId": "b1"})
        self.assertEqual(seen, {"body": {"x": 1}, "ctype": "application/json", "proto": "1"})

    def test_a_connect_error_keeps_the_nodes_code_and_reason(self):
        self.node.json("Get", {"code": "not_found", "message": 'No MachineStatus "x"'}, 404)
        with self.assertRaises(ConnectError) as cm:
            client(self.node.endpoint).unary("Get", {"type": "MachineStatus", "id": "x"})
        e = cm.exception
        self.assertEqual((e.code, e.node_message, e.method), ("not_found", 'No MachineStatus "x"', "Get"))
        self.assertIn("Get: not_found: No MachineStatus", str(e))

    def test_a_status_without_a_json_error_maps_to_connects_code(self):
        self.node.handlers["Version"] = lambda b, h: (503, "text/plain", b"busy")
        with self.assertRaises(ConnectError) as cm:
            client(self.node.endpoint).unary("Version")
        self.assertEqual(cm.exception.code, "unavailable")

    def test_client_stream_sends_envelopes_and_reads_the_one_answer(self):
        def upgrade(body, headers):
            msgs = [json.loads(p) for _f, p in parse_envelopes(body)]
            self.assertEqual(headers["Content-Type"], "application/connect+json")
            answer = {"slot": "B", "messages": len(msgs), "first": msgs[0]}
            return 200, "application/connect+json", (
                envelope(0, json.dumps(answer).encode()) + envelope(2, b"{}"))

        self.node.handlers["Upgrade"] = upgrade
        got = client(self.node.endpoint).client_stream(
            "Upgrade", iter([{"stage": True, "chunk": "AA=="}, {"chunk": "AQ=="}]))
        self.assertEqual(got, {"slot": "B", "messages": 2, "first": {"stage": True, "chunk": "AA=="}})

    def test_client_stream_error_in_the_end_of_stream(self):
        end = {"error": {"code": "invalid_argument", "message": "bad-signature: not signed"}}
        self.node.handlers["Upgrade"] = lambda b, h: (
            200, "application/connect+json", envelope(2, json.dumps(end).encode()))
        with self.assertRaises(ConnectError) as cm:
            client(self.node.endpoint).client_stream("Upgrade", iter([{"chunk": ""}]))
        self.assertEqual((cm.exception.code, cm.exception.node_message),
                         ("invalid_argument", "bad-signature: not signed"))

    def test_an_early_refusal_of_a_long_stream_is_read_not_lost(self):
        end = {"error": {"code": "invalid_argument", "message": "bad-manifest: not a bundle"}}
        self.node.early["Upgrade"] = envelope(2, json.dumps(end).encode())
        chunk = "A" * (100 * 1024)
        with self.assertRaises(ConnectError) as cm:
            client(self.node.endpoint).client_stream("Upgrade", ({"chunk": chunk} for _i in range(80)))
        self.assertEqual((cm.exception.code, cm.exception.node_message),
                         ("invalid_argument", "bad-manifest: not a bundle"))

    def test_a_client_certificate_of_another_ca_fails_with_the_tls_alert(self):
        self.node.json("Version", {})
        with self.assertRaises(TransportError) as cm:
            client(self.node.endpoint, pki=OTHER).unary("Version")
        self.assertEqual(cm.exception.reason, "tls_alert")
        self.assertEqual(cm.exception.alert, "unknown_ca")
        self.assertIn("not from this node's CA", str(cm.exception))

    def test_a_node_outside_the_ca_is_not_trusted(self):
        with self.assertRaises(TransportError) as cm:
            client(self.node.endpoint, ca=OTHER["ca.crt"]).unary("Version")
        self.assertEqual(cm.exception.reason, "untrusted_server")

    def test_a_pinned_fingerprint_is_checked(self):
        self.node.json("Version", {"version": "v"})
        der = ssl.PEM_cert_to_DER_cert(PKI["server.crt"])
        good = hashlib.sha256(der).hexdigest()
        pinned = NodeClient(self.node.endpoint, None, PKI["client.crt"], PKI["client.key"],
                            timeout=5, fingerprint=good.upper())
        self.assertEqual(pinned.unary("Version"), {"version": "v"})
        wrong = NodeClient(self.node.endpoint, None, PKI["client.crt"], PKI["client.key"],
                           timeout=5, fingerprint="00" * 32)
        with self.assertRaises(TransportError) as cm:
            wrong.unary("Version")
        self.assertEqual(cm.exception.reason, "fingerprint_mismatch")

    def test_a_closed_port_is_refused(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(TransportError) as cm:
            client(f"127.0.0.1:{port}").unary("Version")
        self.assertEqual(cm.exception.reason, "refused")


class FailureTest(unittest.TestCase):
    def test_a_failed_task_carries_the_code_and_reason(self):
        f = failure(ConnectError("ApplyConfiguration", "invalid_argument", "machine.hostname: bad"))
        self.assertEqual((f["code"], f["reason"], f["rpc"]),
                         ("invalid_argument", "machine.hostname: bad", "ApplyConfiguration"))
        self.assertIn("invalid_argument", f["msg"])
        t = failure(TransportError("n:1", "tls_alert", "refused with TLS alert unknown_ca", "unknown_ca"))
        self.assertEqual((t["code"], t["reason"], t["tls_alert"]), ("unavailable", "tls_alert", "unknown_ca"))


class EnvelopeTest(unittest.TestCase):
    def test_round_trip_and_truncation(self):
        data = envelope(0, b"{}") + envelope(2, b'{"a":1}')
        self.assertEqual(list(parse_envelopes(data)), [(0, b"{}"), (2, b'{"a":1}')])
        with self.assertRaises(ValueError):
            list(parse_envelopes(data[:-1]))

    def test_fingerprint_spellings(self):
        hexed = "ab" * 32
        self.assertEqual(normalize_fingerprint(":".join(["AB"] * 32)), hexed)
        self.assertEqual(normalize_fingerprint("sha256:" + hexed), hexed)
        with self.assertRaises(ValueError):
            normalize_fingerprint("abc")


if __name__ == "__main__":
    unittest.main()
