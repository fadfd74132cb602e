/**
 * The supervisor with real processes through the native process backend:
 * process groups stopped as a whole, a cgroup memory limit that really
 * OOM-kills, and orphans reaped. Needs root (cgroups, subreaper, credentials).
 */
import assert from "node:assert/strict";
import { NativeCgroupBackend } from "../platform/cgroup/mod.ts";
import { scratchCgroupRoot } from "../platform/cgroup/testing.ts";
import { nativeProcessBackend, type ProcessExit } from "../platform/process/mod.ts";
import {
  type ResourceSpecs,
  SERVICE_SPEC,
  SERVICE_STATUS,
  type ServiceStatusSpec,
} from "../resources/mod.ts";
import { Store } from "../runtime/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { createSupervisor, type Supervisor } from "./supervisor.ts";
import { serviceSpec } from "./testing.ts";

const isRoot = Deno.uid() === 0;
if (!isRoot) console.log("skipping supervisor root tests: they need root (cgroups, subreaper)");

const sh = (script: string) => ["/bin/sh", "-c", script];

function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie is dead
  } catch {
    return false;
  }
}

async function firstLines(s: Supervisor, id: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for await (const l of s.logs(id, { follow: true, signal: AbortSignal.timeout(10_000) })) {
    out.push(l.text);
    if (out.length >= n) break;
  }
  return out;
}

function rootTest(
  name: string,
  fn: (t: {
    store: Store<ResourceSpecs>;
    supervisor: Supervisor;
    status: (id: string, p: (s: ServiceStatusSpec) => boolean) => Promise<ServiceStatusSpec>;
  }) => Promise<void>,
  cgroups?: NativeCgroupBackend,
) {
  Deno.test({
    name: `supervisor (native): ${name} (needs root)`,
    ignore: !isRoot,
    fn: async () => {
      const store = new Store<ResourceSpecs>();
      const supervisor = createSupervisor({ store, process: nativeProcessBackend(), cgroups });
      try {
        await fn({
          store,
          supervisor,
          status: async (id, p) =>
            (await waitForResource(
              store,
              SERVICE_STATUS,
              (r) => r.metadata.id === id && p(r.spec),
              15_000,
            )).spec,
        });
      } finally {
        await supervisor.close();
        await nativeProcessBackend().close();
      }
    },
  });
}

rootTest(
  "stop signals the whole process group, and SIGKILLs it after the grace period",
  async (t) => {
    t.store.create({
      type: SERVICE_SPEC,
      namespace: "runtime",
      id: "group",
      owner: "test",
      spec: serviceSpec({
        command: sh("trap '' TERM; sleep 1000 & echo $!; sleep 1000 & echo $!; wait"),
        stopGraceMs: 300,
      }),
    });
    const running = await t.status("group", (s) => s.state === "running");
    const children = (await firstLines(t.supervisor, "group", 2)).map(Number);
    assert.ok(children.every(alive) && alive(running.pid!));
    const started = performance.now();
    await t.supervisor.stop("group");
    const tookMs = performance.now() - started;
    const s = t.supervisor.get("group").status;
    // sh ignores TERM (its sleeps do not), so only SIGKILL after the grace ends it.
    assert.equal(s.lastExit?.killedAfterGrace, true);
    assert.equal(s.lastExit?.signal, "SIGKILL");
    assert.ok(tookMs >= 300 && tookMs < 5000, `stop took ${tookMs} ms`);
    // SIGKILL to the group is sent; the grandchildren's deaths are not events we can await
    // (they are not our children), so look in /proc for a bounded while.
    for (let i = 0; i < 100 && children.some(alive); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(!children.some(alive), "a child of the service survived its stop");
  },
);

const scratch = isRoot ? await scratchCgroupRoot("supervisor") : undefined;
if (isRoot && !scratch) console.log("skipping the cgroup OOM test: no writable memory cgroup");

Deno.test({
  name: `supervisor (native): memory.max OOM-kills a service that allocates past it (${
    scratch?.kind ?? "none"
  }; needs root, a writable memory cgroup)`,
  ignore: !scratch,
  fn: async () => {
    const cgroups = new NativeCgroupBackend(scratch!.root);
    const store = new Store<ResourceSpecs>();
    const supervisor = createSupervisor({ store, process: nativeProcessBackend(), cgroups });
    try {
      store.create({
        type: SERVICE_SPEC,
        namespace: "runtime",
        id: "hog",
        owner: "test",
        spec: serviceSpec({
          // tail keeps an unterminated line in memory: 256 MiB of it.
          command: sh("head -c 268435456 /dev/zero | tail -c 268435456 | wc -c"),
          restart: "never",
          limits: { memoryMax: 32 << 20 },
        }),
      });
      const s = (await waitForResource(
        store,
        SERVICE_STATUS,
        (r) =>
          r.metadata.id === "hog" && (r.spec.state === "failed" || r.spec.state === "finished"),
        30_000,
      )).spec;
      assert.deepEqual(await cgroups.read("hog"), { memoryMax: 32 << 20 });
      const kills = await cgroups.oomKills("hog");
      console.log(`hog: ${s.message}; oom_kill=${kills}`);
      assert.ok(kills >= 1, "no OOM kill recorded in the service's cgroup");
      const output = [];
      for await (const l of supervisor.logs("hog")) output.push(l.text);
      assert.notEqual(output.at(-1), "268435456", "the allocation was not capped");
    } finally {
      await supervisor.close();
      await nativeProcessBackend().close();
      await cgroups.remove("hog").catch(() => {});
      await Deno.remove(scratch!.root).catch(() => {});
    }
  },
});

rootTest("orphans left behind by a service are reaped", async (t) => {
  const backend = nativeProcessBackend();
  await backend.setChildSubreaper(true);
  const exits = backend.exits();
  try {
    t.store.create({
      type: SERVICE_SPEC,
      namespace: "runtime",
      id: "parent",
      owner: "test",
      spec: serviceSpec({
        // The subshell's sleep outlives its parent (in a session of its own, so the
        // group cleanup after the service exits does not touch it): an orphan.
        command: sh("(setsid sleep 0.3 & echo $!); exit 0"),
        restart: "never",
      }),
    });
    await t.status("parent", () => true);
    const [orphan] = (await firstLines(t.supervisor, "parent", 1)).map(Number);
    await t.status("parent", (s) => s.state === "finished");
    const seen: ProcessExit[] = [];
    const deadline = AbortSignal.timeout(10_000);
    while (!deadline.aborted) {
      const next = await Promise.race([
        exits.next(),
        new Promise<undefined>((r) => deadline.addEventListener("abort", () => r(undefined))),
      ]);
      if (!next || next.done) break;
      seen.push(next.value);
      if (next.value.pid === orphan) break;
    }
    const reaped = seen.find((e) => e.pid === orphan);
    assert.ok(reaped, `orphan ${orphan} was not reaped`);
    // It exits 0, or by SIGKILL when the group cleanup after the service's exit beat setsid.
    assert.ok(reaped.code === 0 || reaped.signal === "SIGKILL", JSON.stringify(reaped));
    assert.ok(!alive(orphan));
  } finally {
    await exits.return?.();
    await backend.setChildSubreaper(false);
  }
});
