/** machinectl health against the real edge and machined-side server: exit 0, then 1 when unhealthy. */
import { deepEqual, equal, match } from "node:assert/strict";
import { startApiFixture } from "../api/testing.ts";
import { clientConfig, runCli as run } from "./testing.ts";
import { healthInput } from "./commands/health.ts";
import { assessHealth, CERT_WARN_DAYS } from "./commands/health_checks.ts";

Deno.test("machinectl health: a reader gets the verdict; a failed service exits 1, escaped", async () => {
  const f = await startApiFixture();
  try {
    const reader = await clientConfig(f, "os:reader");
    let r = await run(reader, "health");
    equal(r.code, 0, r.out + r.err);
    match(r.out, /^CHECK\s+STATUS\s+DETAIL$/m);
    match(r.out, /^stage\s+OK\s+running, ready$/m);
    match(r.out, /^runtime \(CRI\)\s+OK\s+fake 0\.0\.1, ready$/m);
    match(r.out, /^certificate server\s+OK\s+expires in \d+ days/m);
    match(r.out, /^certificate client\s+OK\s+expires in \d+ days/m);
    match(r.out, /\nhealthy$/);
    f.store.create({
      type: "ServiceStatus",
      namespace: "runtime",
      id: "payload",
      owner: "test",
      spec: {
        state: "failed",
        healthy: false,
        restarts: 3,
        pid: null,
        lastExit: null,
        message: "exited \x1b[31m1",
        since: 0,
        logFileError: "",
        sandbox: null,
      },
    });
    r = await run(reader, "health");
    equal(r.code, 1);
    match(r.out, /^service payload\s+FAIL\s+failed: exited \\x1b\[31m1$/m);
    match(r.out, /\nUNHEALTHY$/);
    r = await run(reader, "health", "-o", "json");
    equal(
      JSON.parse(r.out).find((c: { check: string }) => c.check === "service payload").status,
      "fail",
    );
  } finally {
    await f.close();
  }
});

Deno.test("machinectl health: the server certificate warns within the client's threshold", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const day = 86_400_000;
  const soon = new Date(now + (CERT_WARN_DAYS - 1) * day);
  const later = new Date(now + (CERT_WARN_DAYS + 1) * day);
  const certs = (server: Date, client: Date) =>
    assessHealth(healthInput(new Map(), client, server), now)
      .filter((c) => c.check.startsWith("certificate "))
      .map((c) => [c.check, c.status]);
  deepEqual(certs(soon, later), [["certificate server", "warn"], ["certificate client", "ok"]]);
  deepEqual(certs(later, soon), [["certificate server", "ok"], ["certificate client", "warn"]]);
  deepEqual(certs(new Date(now - day), later)[0], ["certificate server", "fail"]);
});
