/**
 * Real mutual-TLS handshakes on loopback with `node:http2`, recording what
 * Deno's TLS stack itself accepts and rejects for client certificates, and
 * that the server reads the role from `req.socket.getPeerCertificate()`.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import type { TLSSocket } from "node:tls";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { issueClientCertificate } from "./client_certificate.ts";
import { DAY_MS, type KeyedCertificate } from "./keyed_certificate.ts";
import { issueLeafCertificate } from "./leaf_certificate.ts";
import { roleFromCertificate } from "./role.ts";
import { issueServerCertificate } from "./server_certificate.ts";
import { verifyClientCertificate } from "./verify_client_certificate.ts";
import { x509 } from "./x509_provider.ts";

interface Outcome {
  status?: number;
  body: string;
  error?: string;
}

interface Seen {
  role: string;
  authorized: boolean;
  peer: ReturnType<TLSSocket["getPeerCertificate"]>;
}

const TIMEOUT_MS = 5000;

async function startServer(ca: KeyedCertificate, server: KeyedCertificate) {
  const seen: Seen[] = [];
  const tlsErrors: string[] = [];
  let onTlsError: (() => void) | undefined;
  const srv = http2.createSecureServer(
    {
      key: server.keyPem,
      cert: server.certPem,
      ca: ca.certPem,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      const role = roleFromCertificate(peer) ?? "none";
      seen.push({ role, authorized: socket.authorized, peer });
      res.end(role);
    },
  );
  srv.on("tlsClientError", (e: NodeJS.ErrnoException) => {
    tlsErrors.push(e.code ?? e.message);
    onTlsError?.();
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as { port: number }).port;
  return {
    port,
    seen,
    tlsErrors,
    nextTlsError: () => new Promise<void>((resolve) => onTlsError = resolve),
    close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
  };
}

/** One request; always settles (bounded by a timeout) and always closes the session. */
function request(port: number, ca: KeyedCertificate, client?: KeyedCertificate): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, {
      ca: ca.certPem,
      ...(client ? { key: client.keyPem, cert: client.certPem } : {}),
    });
    const outcome: Outcome = { body: "" };
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) outcome.error = (error as NodeJS.ErrnoException).code ?? error.message;
      session.destroy();
      if (session.closed) resolve(outcome);
      else session.once("close", () => resolve(outcome));
    };
    const timer = setTimeout(() => finish(new Error("timeout")), TIMEOUT_MS);
    session.on("error", finish);
    const req = session.request({ ":path": "/" });
    req.on("response", (headers) => outcome.status = Number(headers[":status"]));
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => outcome.body += chunk);
    req.on("end", () => finish());
    req.on("error", finish);
  });
}

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

Deno.test("mTLS on loopback: good clients get in with their role; bad ones are refused by TLS", async (t) => {
  const ca = await createCertificateAuthority();
  const other = await createCertificateAuthority();
  const server = await issueServerCertificate({ ca, hostnames: ["node-1"], addresses: [] });
  const srv = await startServer(ca, server);
  try {
    await t.step("a good client connects and the server sees its role", async () => {
      for (const role of ["os:admin", "os:reader"] as const) {
        const client = await issueClientCertificate({ ca, name: "alice", role });
        const out = await request(srv.port, ca, client);
        assert.equal(out.status, 200, JSON.stringify(out));
        assert.equal(out.body, role);
        const seen = srv.seen.at(-1)!;
        assert.equal(seen.authorized, true);
        assert.equal((await verifyClientCertificate(seen.peer, ca)).role, role);
      }
    });

    const refused = async (label: string, client?: KeyedCertificate) => {
      await t.step(`refused at the TLS layer: ${label}`, async () => {
        const before = srv.seen.length;
        const tlsError = srv.nextTlsError();
        const out = await request(srv.port, ca, client);
        await withTimeout(tlsError, `the server's tlsClientError for ${label}`);
        assert.equal(out.status, undefined, JSON.stringify(out));
        assert.equal(srv.seen.length, before, "no handler ran");
      });
    };
    await refused("no client certificate");
    await refused(
      "a certificate from another CA",
      await issueClientCertificate({ ca: other, name: "eve", role: "os:admin" }),
    );
    await refused(
      "an expired certificate",
      await issueClientCertificate({
        ca,
        name: "old",
        role: "os:admin",
        now: new Date(Date.now() - 400 * DAY_MS),
      }),
    );
    await refused(
      "a certificate not valid yet",
      await issueClientCertificate({
        ca,
        name: "soon",
        role: "os:admin",
        now: new Date(Date.now() + 10 * DAY_MS),
      }),
    );
    await refused(
      "a serverAuth-only certificate",
      await issueLeafCertificate({
        ca,
        subject: [{ O: ["os:admin"] }, { CN: ["srv"] }],
        extendedKeyUsages: [x509.ExtendedKeyUsage.serverAuth],
      }),
    );

    await t.step(
      "accepted by TLS, refused by verifyClientCertificate: no EKU, CA cert",
      async () => {
        const noEku = await issueLeafCertificate({
          ca,
          subject: [{ O: ["os:admin"] }, { CN: ["any"] }],
          extendedKeyUsages: [],
        });
        for (const [client, problem] of [[noEku, "not_client_auth"], [ca, "is_ca"]] as const) {
          const out = await request(srv.port, ca, client);
          assert.equal(out.status, 200, "Deno's TLS lets it through");
          const seen = srv.seen.at(-1)!;
          await assert.rejects(
            verifyClientCertificate(seen.peer, ca),
            (e) => (e as { problem?: string }).problem === problem,
          );
        }
      },
    );
  } finally {
    await srv.close();
  }
  console.log(`tlsClientError codes seen by the server: ${JSON.stringify(srv.tlsErrors)}`);
});
