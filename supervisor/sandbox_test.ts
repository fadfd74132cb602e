import assert from "node:assert/strict";
import type { ProbeContext } from "./probes.ts";
import { serviceSpec, supervisorFixture } from "./testing.ts";

const SANDBOX = {
  seccomp: "default",
  capabilities: ["CAP_NET_BIND_SERVICE"],
  noNewPrivs: true,
} as const;

Deno.test("a sandboxed service is spawned with its sandbox; the status shows it in force", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/web");
    f.setSpec("web", serviceSpec({ command: ["/bin/web"], sandbox: SANDBOX }));
    const s = await f.status("web", (s) => s.state === "running");
    assert.deepEqual(s.sandbox, {
      profile: "default",
      seccomp: "filter",
      noNewPrivs: true,
      effective: ["CAP_NET_BIND_SERVICE"],
      bounding: ["CAP_NET_BIND_SERVICE"],
      ambient: ["CAP_NET_BIND_SERVICE"],
    });
    const [p] = f.process.running();
    assert.equal(p.spec.noNewPrivs, true);
    assert.deepEqual(p.spec.sandbox, {
      seccomp: "default",
      capabilities: ["CAP_NET_BIND_SERVICE"],
    });
  } finally {
    await f.close();
  }
});

Deno.test("a service without a sandbox runs as before and shows none", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/plain");
    f.setSpec("plain", serviceSpec({ command: ["/bin/plain"] }));
    const s = await f.status("plain", (s) => s.state === "running");
    assert.equal(s.sandbox, null);
    assert.equal(f.process.running()[0].spec.sandbox, undefined);
  } finally {
    await f.close();
  }
});

Deno.test("exec probes run in the service's sandbox", async () => {
  const seen: ProbeContext[] = [];
  const f = supervisorFixture({
    prober: (_probe, ctx) => {
      seen.push(ctx);
      return Promise.resolve();
    },
  });
  try {
    f.process.define("/bin/web");
    f.setSpec(
      "web",
      serviceSpec({
        command: ["/bin/web"],
        sandbox: SANDBOX,
        health: {
          probe: { kind: "exec", command: ["/bin/check"] },
          intervalMs: 100,
          timeoutMs: 100,
          startPeriodMs: 0,
          successThreshold: 1,
          failureThreshold: 1,
          restartWhenUnhealthy: false,
        },
      }),
    );
    await f.status("web", (s) => s.healthy);
    assert.deepEqual(seen[0].processSpec.sandbox, {
      seccomp: "default",
      capabilities: ["CAP_NET_BIND_SERVICE"],
    });
    assert.equal(seen[0].processSpec.noNewPrivs, true);
  } finally {
    await f.close();
  }
});
