"""Test support: the collection importable as `ansible_collections.machined.fleet`
without installing it (a symlink in a temp dir on sys.path), certificates made
with the openssl CLI, and a fake node: an HTTPS server that requires a client
certificate from its CA and answers from a table of handlers."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_root = tempfile.mkdtemp(prefix="machined-fleet-test-")
atexit.register(shutil.rmtree, _root, True)
os.makedirs(os.path.join(_root, "ansible_collections", "machined"))
os.symlink(COLLECTION, os.path.join(_root, "ansible_collections", "machined", "fleet"))
sys.path.insert(0, _root)


def _openssl(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(name: str) -> dict:
    """A CA, a server certificate for 127.0.0.1/localhost and a client
    certificate, as PEM texts; EC P-256 like the node's."""
    d = os.path.join(_root, name)
    os.makedirs(d)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", f"/CN={name} CA", cwd=d)
    for leaf, ext in (("server", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
                      ("client", "extendedKeyUsage=clientAuth")):
        _openssl("req", *ec, "-keyout", f"{leaf}.key", "-out", f"{leaf}.csr",
                 "-subj", f"/O=os:admin/CN={leaf}", cwd=d)
        with open(os.path.join(d, f"{leaf}.ext"), "w") as f:
            f.write(ext + "\n")
        _openssl("x509", "-req", "-in", f"{leaf}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "2", "-out", f"{leaf}.crt",
                 "-extfile", f"{leaf}.ext", cwd=d)
    out = {"dir": d}
    for f in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key"):
        with open(os.path.join(d, f)) as fh:
            out[f] = fh.read()
    return out


class _TlsServer(ThreadingHTTPServer):
    """TLS per connection in its own thread. A refused handshake drains what
    the client already sent before closing, as the edge does (alert_delay.rs):
    closing with unread data sends a TCP reset that can overtake the alert."""

    def finish_request(self, request, client_address):
        tls = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        try:
            tls.do_handshake()
        except (ssl.SSLError, OSError):
            tls.settimeout(0.5)
            try:  # the raw socket's recv: TLS is over for this connection
                while socket.socket.recv(tls, 65536):
                    pass
            except OSError:
                pass
            return
        super().finish_request(tls, client_address)


class FakeNode:
    """An HTTPS server on 127.0.0.1 with TLS 1.3 and a required client
    certificate from `pki`'s CA. `handlers[method](body, headers)` returns
    (status, content type, bytes); `calls` records (method, body)."""

    def __init__(self, pki: dict):
        self.handlers = {}
        # method -> a streaming answer sent before the request body is read.
        self.early = {}
        self.calls = []
        node = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                method = self.path.rsplit("/", 1)[-1]
                if method in node.early:
                    return self._refuse_early(node.early[method])
                if self.headers.get("Transfer-Encoding") == "chunked":
                    body = self._chunked()
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                method = self.path.rsplit("/", 1)[-1]
                node.calls.append((method, body))
                h = node.handlers.get(method)
                status, ctype, data = h(body, self.headers) if h else (
                    404, "application/json",
                    json.dumps({"code": "unimplemented", "message": f"no {method}"}).encode())
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _refuse_early(self, answer: bytes):
                """Answers before reading the body, then reads at most 256 KiB
                of it for 1 s and closes, as the edge does (request_body.rs)."""
                self.send_response(200)
                self.send_header("Content-Type", "application/connect+json")
                self.send_header("Content-Length", str(len(answer)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(answer)
                self.wfile.flush()
                self.connection.settimeout(1)
                drained = 0
                try:
                    while drained < 256 * 1024:
                        got = self.connection.recv(65536)
                        if not got:
                            break
                        drained += len(got)
                except OSError:
                    pass
                self.close_connection = True

            def _chunked(self) -> bytes:
                out = b""
                while True:
                    n = int(self.rfile.readline().strip(), 16)
                    if n == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(n)
                    self.rfile.readline()

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cadata=pki["ca.crt"])
        ctx.load_cert_chain(os.path.join(pki["dir"], "server.crt"),
                            os.path.join(pki["dir"], "server.key"))
        self.server = _TlsServer(("127.0.0.1", 0), Handler)
        self.server.tls = ctx
        self.server.daemon_threads = True
        self.endpoint = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def json(self, method: str, answer: dict, status: int = 200) -> None:
        """Answer `method` with `answer` as JSON."""
        self.handlers[method] = lambda b, h: (status, "application/json", json.dumps(answer).encode())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
