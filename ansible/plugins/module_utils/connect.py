"""A Connect client for machined's API over HTTPS with the client
certificate, standard library only.

machined's edge (native-ops/edge) serves HTTP/1.1 beside HTTP/2 when ALPN
says so and forwards each request to machined unchanged, so the Connect
protocol's HTTP/1.1 forms suffice: unary calls as `application/json`, and
the one client-streaming call (Upgrade) as `application/connect+json`
envelopes in a chunked request body (HTTP/1.1 is half duplex, which is all
client streaming needs). No HTTP/2 library is needed (docs/decisions.md).

Each call opens its own connection: a play makes a few calls per node, and
a fresh connection is what a node coming back from a reboot needs anyway.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import socket
import ssl
import tempfile

from ansible_collections.machined.fleet.plugins.module_utils.client_config import host_port
from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    ConnectError,
    TransportError,
)
from ansible_collections.machined.fleet.plugins.module_utils.stream import (
    envelope,
    read_response,
    send_streaming,
    stream_result,
)

SERVICE = "machined.v1.MachineService"
# The edge's message limit is 4 MiB; a response larger than this is refused here.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024

# Connect's mapping of an HTTP status without a JSON error body to a code.
HTTP_CODES = {
    400: "internal", 401: "unauthenticated", 403: "permission_denied", 404: "unimplemented",
    429: "unavailable", 502: "unavailable", 503: "unavailable", 504: "unavailable",
}
ALERT = re.compile(r"(?:TLSV13|TLSV1|SSLV3)_ALERT_([A-Z_]+)")


class NodeClient:
    """One node's API. `ca_pem`/`cert_pem`/`key_pem` as from a client config;
    `fingerprint` (SHA-256 hex of the server certificate) instead of a CA for a
    node in maintenance mode, which takes no client certificate."""

    def __init__(self, endpoint, ca_pem=None, cert_pem=None, key_pem=None, timeout=30.0,
                 fingerprint=None, server_name=None):
        self.endpoint = endpoint
        self.host, self.port = host_port(endpoint)
        self.timeout = timeout
        self.fingerprint = normalize_fingerprint(fingerprint) if fingerprint else None
        self.server_name = server_name or self.host
        self._ctx = self._context(ca_pem, cert_pem, key_pem)

    def _context(self, ca_pem, cert_pem, key_pem) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3  # the edge speaks TLS 1.3 only
        ctx.set_alpn_protocols(["http/1.1"])
        if self.fingerprint:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE  # pinned by fingerprint in _connect
        else:
            ctx.load_verify_locations(cadata=ca_pem)
        if cert_pem and key_pem:
            load_chain(ctx, cert_pem, key_pem)
        return ctx

    def _connect(self) -> http.client.HTTPSConnection:
        conn = http.client.HTTPSConnection(self.host, self.port, context=self._ctx,
                                           timeout=self.timeout)
        try:
            conn.sock = self._ctx.wrap_socket(
                socket.create_connection((self.host, self.port), self.timeout),
                server_hostname=self.server_name)
        except (OSError, ssl.SSLError) as e:
            conn.close()
            raise transport_error(self.endpoint, e) from e
        if self.fingerprint:
            seen = hashlib.sha256(conn.sock.getpeercert(binary_form=True)).hexdigest()
            if seen != self.fingerprint:
                conn.close()
                raise TransportError(self.endpoint, "fingerprint_mismatch",
                                     f"the node's certificate has fingerprint {seen}, "
                                     f"not the pinned {self.fingerprint}")
        return conn

    def unary(self, method: str, request: dict | None = None, timeout=None) -> dict:
        """Calls `method` with a JSON request. @raises ConnectError, TransportError"""
        body = json.dumps(request or {}).encode()
        headers = {"Content-Type": "application/json", "Connect-Protocol-Version": "1",
                   "Connect-Timeout-Ms": str(int((timeout or self.timeout) * 1000))}
        conn = self._connect()
        try:
            status, ctype, data = self._exchange(conn, method, body, headers, False)
        finally:
            conn.close()
        if status == 200:
            return decode_json(method, data)
        raise unary_error(method, status, ctype, data)

    def client_stream(self, method: str, messages, timeout=None) -> dict:
        """Calls a client-streaming `method` with an iterable of JSON messages,
        sent as they are produced (a bundle is never held whole in memory).
        @raises ConnectError, TransportError"""
        headers = {"Content-Type": "application/connect+json", "Connect-Protocol-Version": "1",
                   "Connect-Timeout-Ms": str(int((timeout or self.timeout) * 1000))}
        body = (envelope(0, json.dumps(m).encode()) for m in messages)
        conn = self._connect()
        try:
            status, ctype, data = self._exchange(conn, method, body, headers, True)
        finally:
            conn.close()
        if status != 200:
            raise unary_error(method, status, ctype, data)
        return stream_result(method, data)

    def _exchange(self, conn, method, body, headers, chunked):
        path = f"/{SERVICE}/{method}"
        try:
            if chunked:
                resp = read_response(conn.sock, send_streaming(conn, path, headers, body))
            else:
                conn.request("POST", path, body=body, headers=headers)
                resp = conn.getresponse()
            data = resp.read(MAX_RESPONSE_BYTES + 1)
        except (OSError, ssl.SSLError, http.client.HTTPException) as e:
            raise transport_error(self.endpoint, e) from e
        if len(data) > MAX_RESPONSE_BYTES:
            raise TransportError(self.endpoint, "protocol",
                                 f"{method}: response over {MAX_RESPONSE_BYTES} bytes")
        return resp.status, resp.getheader("Content-Type", ""), data


def load_chain(ctx: ssl.SSLContext, cert_pem: str, key_pem: str) -> None:
    """ssl only loads a key from a file: written to a private directory (0700,
    the file 0600) and removed as soon as it is loaded."""
    d = tempfile.mkdtemp(prefix="machined-")
    try:
        cert, key = os.path.join(d, "crt.pem"), os.path.join(d, "key.pem")
        for path, text in ((cert, cert_pem), (key, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        ctx.load_cert_chain(cert, key)
    finally:
        for name in os.listdir(d):
            os.unlink(os.path.join(d, name))
        os.rmdir(d)


def decode_json(method: str, data: bytes) -> dict:
    try:
        return json.loads(data or b"{}")
    except ValueError as e:
        raise ConnectError(method, "internal", f"the response is not JSON: {e}") from e


def unary_error(method: str, status: int, ctype: str, data: bytes) -> ConnectError:
    """The node's Connect error: its code and message from the JSON body, or
    Connect's code for the HTTP status when the body is not one."""
    if ctype.startswith("application/json"):
        try:
            err = json.loads(data)
            if isinstance(err, dict) and err.get("code"):
                return ConnectError(method, err["code"], err.get("message", ""),
                                    err.get("details"), status)
        except ValueError:
            pass
    text = data[:200].decode("utf-8", "replace")
    return ConnectError(method, HTTP_CODES.get(status, "unknown"), f"HTTP {status}: {text}",
                        http_status=status)


def transport_error(endpoint: str, e: BaseException) -> TransportError:
    """Names why a connection failed; a TLS alert by its name, as machinectl does."""
    if isinstance(e, ssl.SSLCertVerificationError):
        return TransportError(endpoint, "untrusted_server",
                              f"the node's certificate is not trusted: {e.verify_message}")
    if isinstance(e, ssl.SSLEOFError):
        return TransportError(endpoint, "unreachable",
                              "the node closed the connection in TLS without an alert (a "
                              "refused client certificate whose alert was lost, or the node "
                              "going down)")
    if isinstance(e, ssl.SSLError):
        m = ALERT.search(e.reason or str(e))
        if m:
            alert = m.group(1).lower()
            return TransportError(endpoint, "tls_alert",
                                  f"the node refused the connection with TLS alert {alert}"
                                  f"{alert_hint(alert)}", alert)
        return TransportError(endpoint, "protocol", f"TLS failed: {e.reason or e}")
    if isinstance(e, ConnectionRefusedError):
        return TransportError(endpoint, "refused", "connection refused (is the API up?)")
    if isinstance(e, (socket.timeout, TimeoutError)):
        return TransportError(endpoint, "timeout", "timed out")
    if isinstance(e, (ConnectionResetError, http.client.RemoteDisconnected)):
        return TransportError(endpoint, "unreachable",
                              "the node closed the connection (a refused client certificate "
                              "or the node going down)")
    return TransportError(endpoint, "unreachable", f"cannot reach the node: {e}")


def alert_hint(alert: str) -> str:
    return {
        "unknown_ca": " (the client certificate is not from this node's CA)",
        "certificate_required": " (no client certificate: use a client config)",
        "bad_certificate": " (the client certificate was refused)",
        "certificate_expired": " (the client certificate has expired)",
    }.get(alert, "")


def normalize_fingerprint(text: str) -> str:
    """`AB:CD:...`, `sha256:abcd...` or plain hex → lowercase hex. @raises ValueError"""
    hexed = text.lower().removeprefix("sha256:").replace(":", "").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", hexed):
        raise ValueError(f'fingerprint "{text}" is not a SHA-256 (64 hex digits)')
    return hexed
