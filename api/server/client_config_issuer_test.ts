/**
 * GenerateClientConfiguration through apid: the lifetime cap (default one
 * year, refused above it) and the endpoints written when the request names
 * none (the node's addresses; the fixture's issuer falls back to loopback).
 */
import { equal, match, ok, throws } from "node:assert/strict";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { Role as ProtoRole } from "../gen/machined/v1/machine_pb.ts";
import { certificateFromPem, DAY_MS, parseClientConfig } from "../../pki/mod.ts";
import { outcome, startApiFixture } from "../testing.ts";
import { clientCertLifetimeMs, MAX_API_CLIENT_CERT_LIFETIME_MS } from "./client_config_issuer.ts";

Deno.test("the API's client certificate lifetime: one year by default and at most", () => {
  equal(MAX_API_CLIENT_CERT_LIFETIME_MS, 365 * DAY_MS);
  equal(clientCertLifetimeMs(undefined), 365 * DAY_MS);
  equal(clientCertLifetimeMs(DAY_MS), DAY_MS);
  equal(clientCertLifetimeMs(365 * DAY_MS), 365 * DAY_MS);
  throws(() => clientCertLifetimeMs(365 * DAY_MS + 1), RangeError);
  throws(() => clientCertLifetimeMs(0), RangeError);
});

Deno.test("GenerateClientConfiguration caps lifetimes and refuses longer ones", async () => {
  const f = await startApiFixture();
  try {
    const admin = f.client();
    const lifetime = async (ms?: number) => {
      const before = Date.now();
      const r = await admin.api.generateClientConfiguration({
        role: ProtoRole.OPERATOR,
        name: "ops",
        ...(ms === undefined ? {} : { lifetime: durationFromMs(ms) }),
      });
      const cert = certificateFromPem(r.crtPem, "issued");
      return (cert.notAfter.getTime() - before) / DAY_MS;
    };
    const near = (days: number, want: number) => ok(Math.abs(days - want) < 0.01, `${days} days`);
    near(await lifetime(), 365);
    near(await lifetime(30 * DAY_MS), 30);
    near(await lifetime(365 * DAY_MS), 365);
    try {
      await lifetime(366 * DAY_MS);
      ok(false, "a lifetime above the cap must be refused");
    } catch (e) {
      ok(e instanceof ConnectError && e.code === Code.InvalidArgument, String(e));
      ok(
        e.rawMessage.includes("exceeds the cap") && e.rawMessage.includes("365 days"),
        e.rawMessage,
      );
    }
    equal(await outcome(() => lifetime(-1)), "InvalidArgument");
  } finally {
    await f.close();
  }
});

Deno.test("GenerateClientConfiguration writes the endpoints asked for, else the node's", async () => {
  const f = await startApiFixture();
  try {
    const admin = f.client();
    const asked = await admin.api.generateClientConfiguration({
      role: ProtoRole.READER,
      name: "r",
      endpoints: ["node-1.example.org:50000"],
    });
    const ctx = (yaml: string) => {
      const c = parseClientConfig(yaml);
      return c.contexts[c.context!];
    };
    equal(ctx(asked.configYaml).endpoints.join(","), "node-1.example.org:50000");
    const dflt = await admin.api.generateClientConfiguration({ role: ProtoRole.READER, name: "r" });
    equal(ctx(dflt.configYaml).endpoints.join(","), "127.0.0.1:50000");
  } finally {
    await f.close();
  }
});

Deno.test("GenerateClientConfiguration refuses control, bidi and zero-width characters in the name and endpoints", async () => {
  const f = await startApiFixture();
  try {
    const admin = f.client();
    const refused = async (req: { name: string; endpoints?: string[] }, want: RegExp) => {
      try {
        await admin.api.generateClientConfiguration({ role: ProtoRole.READER, ...req });
        ok(false, `${JSON.stringify(req)} must be refused`);
      } catch (e) {
        ok(e instanceof ConnectError && e.code === Code.InvalidArgument, String(e));
        match(e.rawMessage, want);
      }
    };
    await refused(
      { name: "ops\x1b]0;pwned\x07\x1b[2J" },
      /^GenerateClientConfiguration: name .*U\+001B/,
    );
    await refused({ name: "ops\n[info] audit: forged" }, /name .*U\+000A/);
    await refused({ name: "ops\r" }, /name .*U\+000D/);
    await refused({ name: "ops\u009b2J" }, /name .*U\+009B/);
    await refused({ name: "admin\u202e" }, /name .*U\+202E/);
    await refused({ name: "ad\u200bmin" }, /name .*U\+200B/);
    await refused(
      { name: "r", endpoints: ["node-1\x1b[2J:50000"] },
      /endpoint .* holds a space, control/,
    );
    // A plain name still works.
    const r = await admin.api.generateClientConfiguration({
      role: ProtoRole.READER,
      name: "älice",
    });
    equal(certificateFromPem(r.crtPem, "issued").subjectName.getField("CN")[0], "älice");
  } finally {
    await f.close();
  }
});
