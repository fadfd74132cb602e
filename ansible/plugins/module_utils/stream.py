"""The Connect protocol's streaming half over HTTP/1.1, for Upgrade (client
streaming): the envelopes (flags, big-endian length, JSON), the chunked
request body sent while watching for an early answer, and the response read
with what was already received put back in front."""

from __future__ import annotations

import http.client
import io
import json
import select
import ssl
import struct

from ansible_collections.machined.fleet.plugins.module_utils.errors import ConnectError

END_STREAM = 0x02
# How much of a stream is written between checks for an early answer.
SEND_SLICE = 64 * 1024


def envelope(flags: int, payload: bytes) -> bytes:
    """A Connect streaming envelope: flags, big-endian length, payload."""
    return struct.pack(">BI", flags, len(payload)) + payload


def parse_envelopes(data: bytes):
    """(flags, payload) of each envelope. @raises ValueError when truncated."""
    i = 0
    while i < len(data):
        if len(data) - i < 5:
            raise ValueError("truncated envelope header")
        flags, n = struct.unpack(">BI", data[i:i + 5])
        if len(data) - i - 5 < n:
            raise ValueError("truncated envelope")
        yield flags, data[i + 5:i + 5 + n]
        i += 5 + n


def stream_result(method: str, data: bytes) -> dict:
    """The one response message of a client-streaming call, or its end-stream error."""
    message = None
    try:
        for flags, payload in parse_envelopes(data):
            if flags & END_STREAM:
                end = json.loads(payload or b"{}")
                err = end.get("error")
                if err:
                    raise ConnectError(method, err.get("code", "unknown"),
                                       err.get("message", ""), err.get("details"))
            else:
                message = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as e:
        raise ConnectError(method, "internal", f"malformed stream response: {e}") from e
    if message is None:
        raise ConnectError(method, "internal", "the stream ended without a response message")
    return message


def send_streaming(conn, path: str, headers: dict, body) -> bytes:
    """Sends a chunked request body, stopping as soon as the node has
    answered; returns what it already read of the answer. HTTP/1.1 is half
    duplex for http.client: a node that refuses a stream early (a bad bundle
    header) answers at once and, once it has drained a little more (the
    edge's DRAIN_BYTES), closes; a client still writing would then get a
    reset that discards the answer. So the socket is checked for an answer
    before each 64 KiB written."""
    conn.putrequest("POST", path, skip_accept_encoding=True)
    for k, v in {**headers, "Transfer-Encoding": "chunked"}.items():
        conn.putheader(k, v)
    conn.endheaders()
    try:
        for data in body:
            frame = b"%x\r\n%s\r\n" % (len(data), data)
            for i in range(0, len(frame), SEND_SLICE):
                early = early_answer(conn.sock)
                if early:
                    return early
                conn.sock.sendall(frame[i:i + SEND_SLICE])
        conn.sock.sendall(b"0\r\n\r\n")
    except OSError:  # ssl.SSLError included
        # The node answered and closed (a reset, or TLS seeing the socket end
        # mid-write): its answer may be in the receive buffer; reading says.
        pass
    return b""


def early_answer(sock) -> bytes:
    """What the node has already sent, without waiting. TLS 1.3 session
    tickets make the socket readable too: a read that yields no data (they
    are consumed) means no answer yet."""
    if not sock.pending() and not select.select([sock], [], [], 0)[0]:
        return b""
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        return sock.recv(65536)
    except (ssl.SSLWantReadError, BlockingIOError):
        return b""
    finally:
        sock.settimeout(timeout)


class _Prefixed(io.RawIOBase):
    """The socket's stream with the bytes already read put back in front."""

    def __init__(self, sock, prefix: bytes):
        self.sock, self.prefix = sock, prefix

    def readable(self):
        return True

    def readinto(self, b):
        if self.prefix:
            n = min(len(b), len(self.prefix))
            b[:n], self.prefix = self.prefix[:n], self.prefix[n:]
            return n
        return self.sock.recv_into(b)


def read_response(sock, prefix: bytes) -> http.client.HTTPResponse:
    """The HTTP response on `sock`, starting with `prefix` already read."""
    class Source:
        def makefile(self, mode):
            return io.BufferedReader(_Prefixed(sock, prefix))

    resp = http.client.HTTPResponse(Source(), method="POST")
    resp.begin()
    return resp
