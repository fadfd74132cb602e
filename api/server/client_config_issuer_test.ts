/**
 * GenerateClientConfiguration through apid: the lifetime cap (default one
 * year, refused above it) and the endpoints written when the request names
 * none (the node's addresses; the fixture's issuer falls back to loopback).
 */
import { equal, ok, throws } from "node:assert/strict";
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
