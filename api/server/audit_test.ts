/**
 * The audit trail, through the real path: a client with a role's certificate
 * calls apid over mTLS, apid forwards to machined's internal server, and
 * machined's log (read back with the Logs RPC, as `machinectl logs machined`
 * does) has one line per mutating call with the caller's CN, role and serial.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Role as ProtoRole } from "../gen/machined/v1/machine_pb.ts";
import { ApplyMode } from "../gen/machined/v1/resources_pb.ts";
import { outcome, startApiFixture } from "../testing.ts";
import type { MachineClient } from "../client/mod.ts";
import { formatFields } from "../../logs/mod.ts";

async function machinedLog(c: MachineClient): Promise<string[]> {
  const lines: string[] = [];
  for await (const l of c.api.logs({ id: "machined" })) lines.push(l.text);
  return lines.filter((l) => l.includes(" audit: "));
}

Deno.test("every mutating RPC leaves an audit line with CN, role and serial", async () => {
  const f = await startApiFixture();
  try {
    const admin = f.client(f.pki.clients["os:admin"]);
    const operator = f.client(f.pki.clients["os:operator"]);
    const serial = (r: "os:admin" | "os:operator") => f.pki.clients[r].cert.serialNumber;
    await operator.api.serviceRestart({ id: "payload" });
    equal(await outcome(() => operator.api.serviceStop({ id: "nope" })), "NotFound");
    await operator.api.reboot({});
    await admin.api.applyConfiguration({
      configYaml: "version: v1alpha1\nmachine:\n  hostname: n\n",
      dryRun: true,
    });
    await admin.api.applyConfiguration({
      configYaml: "version: v1alpha1\nmachine:\n  hostname: n\n",
      mode: ApplyMode.TRY,
    });
    await admin.api.applyConfiguration({ confirm: true });
    // This fixture's applier does not patch: refused, and logged with the count, not the text.
    const patches = [{ text: "machine: {hostname: SECRETvalue}" }];
    equal(
      await outcome(() => admin.api.applyConfiguration({ patches, baseSha256: "ab".repeat(32) })),
      "FailedPrecondition",
    );
    await admin.api.generateClientConfiguration({
      role: ProtoRole.READER,
      name: "bob",
      lifetime: durationFromMs(3_600_000),
    });
    // Reads are not audited.
    await admin.api.version({});
    await admin.api.serviceList({});

    const who = (r: "os:admin" | "os:operator") =>
      formatFields({ cn: r.slice(3), role: r, serial: serial(r) });
    deepEqual(await machinedLog(admin), [
      `[info] audit: ServiceRestart ${who("os:operator")} id=payload outcome=ok`,
      `[warn] audit: ServiceStop ${who("os:operator")} id=nope outcome=NotFound`,
      `[info] audit: Reboot ${who("os:operator")} outcome=ok`,
      `[info] audit: ApplyConfiguration ${who("os:admin")} dryRun=true outcome=ok`,
      `[info] audit: ApplyConfiguration ${who("os:admin")} dryRun=false mode=try outcome=ok`,
      `[info] audit: ApplyConfiguration ${who("os:admin")} dryRun=false confirm=true outcome=ok`,
      `[warn] audit: ApplyConfiguration ${who("os:admin")} dryRun=false patches=1 ` +
      `base=abababababab outcome=FailedPrecondition`,
      `[info] audit: GenerateClientConfiguration ${who("os:admin")} issuedRole=os:reader ` +
      `issuedName=bob lifetimeMs=3600000 outcome=ok`,
    ]);
    ok(serial("os:admin").length > 0 && serial("os:admin") !== serial("os:operator"));
  } finally {
    await f.close();
  }
});

Deno.test("a client cannot send its own identity headers: apid sets them from the certificate", async () => {
  const f = await startApiFixture();
  try {
    const forged = {
      "x-machined-role": "os:admin",
      "x-machined-identity": "mallory",
      "x-machined-serial": "ff",
    };
    const reader = f.client(f.pki.clients["os:reader"]);
    equal(
      await outcome(() => reader.api.reboot({}, { headers: forged })),
      "PermissionDenied",
      "a reader claiming admin is still a reader",
    );
    const operator = f.client(f.pki.clients["os:operator"]);
    await operator.api.reboot({}, { headers: forged });
    deepEqual(f.actions.calls.map((c) => c.by), [{ name: "operator", role: "os:operator" }]);
    const lines = await machinedLog(operator);
    // machined refuses the reader (machined-edge only forwards), and audits the refusal
    // under the reader's own certificate.
    equal(lines.length, 2, lines.join("\n"));
    const serial = f.pki.clients["os:reader"].cert.serialNumber;
    ok(lines[0].includes(`role=os:reader serial=${serial}`), lines[0]);
    ok(lines[0].includes("outcome=PermissionDenied"), lines[0]);
    const last = lines.at(-1)!;
    ok(last.includes(`serial=${f.pki.clients["os:operator"].cert.serialNumber}`), last);
    for (const line of lines) {
      ok(!line.includes("mallory") && !line.includes("serial=ff "), line);
    }
  } finally {
    await f.close();
  }
});
