import assert from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { describeError, tlsAlert } from "./errors.ts";
import { CliError } from "./io.ts";

Deno.test("a reset stream right after the handshake reads as a refused client certificate", () => {
  const e = new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled);
  assert.match(
    describeError(e, "10.0.0.1:50000"),
    /^the node at 10\.0\.0\.1:50000 rejected this client certificate/,
  );
});

Deno.test("permission denied keeps the server's message naming role and method", () => {
  const e = new ConnectError(
    'role "os:reader" may not call machined.v1.MachineService/Reboot',
    Code.PermissionDenied,
  );
  assert.equal(
    describeError(e),
    'permission denied: role "os:reader" may not call machined.v1.MachineService/Reboot',
  );
});

Deno.test("an unreachable endpoint says so", () => {
  const e = new ConnectError("connect ECONNREFUSED 127.0.0.1:1", Code.Unavailable);
  assert.match(describeError(e, "127.0.0.1:1"), /^cannot reach the node at 127\.0\.0\.1:1/);
});

Deno.test("CLI errors pass through as they are", () => {
  assert.equal(describeError(new CliError("no client config")), "no client config");
});

Deno.test("a server certificate that does not name the address says so", () => {
  const e = new ConnectError(
    "Hostname/IP does not match certificate's altnames: IP: 10.0.0.5 is not in the cert's list: 127.0.0.1, ::1",
    Code.Internal,
  );
  assert.match(
    describeError(e, "10.0.0.5:50000"),
    /^the node at 10\.0\.0\.5:50000 presented a certificate that does not name the address dialled \(.*IP: 10\.0\.0\.5 is not in the cert's list/,
  );
});

Deno.test("a socket the node ended during the handshake names the local reason, in one line", () => {
  const e = new ConnectError("This socket has been ended by the other party", Code.Internal);
  assert.equal(
    describeError(e, "10.0.0.1:50000", "it expired on 2026-11-30T20:00:00.000Z"),
    "the node at 10.0.0.1:50000 refused this client certificate: it expired on 2026-11-30T20:00:00.000Z",
  );
  // Without a local reason the refusal is still named, with what the wire said.
  assert.match(
    describeError(new ConnectError("read ECONNRESET", Code.Unavailable)),
    /^the node rejected this client certificate \(.*ECONNRESET\)$/,
  );
});

Deno.test("a handshake the node cut off (apid restarting) says so, not that the certificate was refused", () => {
  const e = new ConnectError(
    "Client network socket disconnected before secure TLS connection was established",
    Code.Aborted,
  );
  assert.match(
    describeError(e, "10.0.0.5:50000"),
    /^the node at 10\.0\.0\.5:50000 closed the connection during the TLS handshake \(its API may be restarting/,
  );
});

Deno.test("tlsAlert names the alert in RFC 8446's spelling, from rustls's and OpenSSL's wording", () => {
  assert.equal(tlsAlert("received fatal alert: CertificateExpired"), "certificate_expired");
  assert.equal(tlsAlert("x received fatal alert: UnknownCA y"), "unknown_ca");
  assert.equal(tlsAlert("received fatal alert: UnsupportedCertificate"), "unsupported_certificate");
  assert.equal(tlsAlert("error:0A000418:SSL routines::tlsv1 alert unknown ca:"), "unknown_ca");
  assert.equal(tlsAlert("ssl3_read_bytes:sslv3 alert bad certificate"), "bad_certificate");
  assert.equal(tlsAlert("socket hang up"), undefined);
});
