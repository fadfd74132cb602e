import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeClock } from "../../runtime/mod.ts";
import { FakeProcessBackend } from "./backend_fake.ts";
import {
  processBackendConformance,
  type ProcessPrograms,
  withTimeout,
} from "./backend_conformance.ts";
import { readLines } from "./lines.ts";

/** The conformance programs, as scripted fakes. */
function fakePrograms(fake: FakeProcessBackend): ProcessPrograms {
  fake
    .define("exit-with", (p) => p.exit(Number(p.spec.argv[1])))
    .define("print", (p) => {
      const [out, err, code] = JSON.parse(p.spec.argv[1]) as [string[], string[], number];
      for (const l of out) p.writeLine("stdout", l);
      for (const l of err) p.writeLine("stderr", l);
      p.exit(code);
    })
    .define("sleeper", (p) => p.writeLine("stdout", "ready"))
    .define("term-ignorer", (p) => p.ignore("SIGTERM").writeLine("stdout", "ready"));
  return {
    exitWith: (code) => ({ argv: ["exit-with", String(code)] }),
    print: (out, err, code) => ({ argv: ["print", JSON.stringify([out, err, code])] }),
    sleeper: () => ({ argv: ["sleeper"] }),
    termIgnorer: () => ({ argv: ["term-ignorer"] }),
    missing: () => ({ argv: ["/nonexistent/program"] }),
  };
}

processBackendConformance("FakeProcessBackend", () => {
  const backend = new FakeProcessBackend();
  return Promise.resolve({ backend, programs: fakePrograms(backend) });
});

Deno.test("fake: grace-period kill driven by a FakeClock", async () => {
  const clock = new FakeClock();
  const fake = new FakeProcessBackend({ clock }).define("svc", (p) => p.ignore("SIGTERM"));
  const handle = await fake.spawn({ argv: ["svc"] });
  await fake.signal({ pid: handle.pid }, "SIGTERM");
  // A supervisor would now sleep for its grace period on the same clock.
  const graceOver = clock.sleep(10_000).then(() =>
    fake.signal({ pid: handle.pid, group: true }, "SIGKILL")
  );
  await clock.advance(10_000);
  await graceOver;
  const exit = await handle.exited;
  assert.equal(exit.signal, "SIGKILL");
  assert.deepEqual(fake.processes[0].signals, ["SIGTERM", "SIGKILL"]);
});

Deno.test("fake: exitAfter uses the injected clock (restart-policy tests)", async () => {
  const clock = new FakeClock();
  const fake = new FakeProcessBackend({ clock }).define("crashy", (p) => p.exitAfter(500, 1));
  const handle = await fake.spawn({ argv: ["crashy"] });
  await clock.waitForSleepers(1);
  assert.equal(fake.running().length, 1);
  await clock.advance(500);
  assert.equal((await handle.exited).code, 1);
  assert.equal(fake.running().length, 0);
});

Deno.test("fake: handlers turn SIGTERM into a clean exit; SIGKILL is never ignored", async () => {
  const fake = new FakeProcessBackend()
    .define("graceful", (p) => p.on("SIGTERM", (self) => self.exit(0)))
    .define("stubborn", (p) => p.ignore("SIGKILL", "SIGTERM"));
  const a = await fake.spawn({ argv: ["graceful"] });
  await fake.signal({ pid: a.pid }, "SIGTERM");
  assert.equal((await a.exited).code, 0);
  const b = await fake.spawn({ argv: ["stubborn"] });
  await fake.signal({ pid: b.pid }, "SIGKILL");
  assert.equal((await b.exited).signal, "SIGKILL");
});

Deno.test("fake: waitForSpawn, output from a test, group signals and orphans", async () => {
  const fake = new FakeProcessBackend().define("app");
  const spawned = fake.waitForSpawn((p) => p.program === "app");
  const handle = await fake.spawn({ argv: ["app"], env: { A: "1" }, uid: 1000 });
  const proc = await spawned;
  assert.equal(proc.spec.uid, 1000);
  proc.writeLine("stdout", "hello");
  const lines = readLines(handle.stdout!);
  assert.equal((await lines.next()).value, "hello");
  const exits = fake.exits();
  const orphan = fake.adoptOrphan();
  orphan.exit(7);
  assert.deepEqual((await withTimeout(exits.next(), 1000, "orphan")).value, {
    pid: orphan.pid,
    code: 7,
    signal: null,
    coreDumped: false,
  });
  await fake.signal({ pid: handle.pid, group: true }, "SIGHUP");
  assert.equal((await handle.exited).signal, "SIGHUP");
  assert.equal((await lines.next()).done, true);
  await exits.return!();
});

Deno.test("fake: injected spawn failures and non-shared sessions", async () => {
  const fake = new FakeProcessBackend().define("app");
  fake.faults.failNext("spawn", "EACCES");
  await assert.rejects(fake.spawn({ argv: ["app"] }), (e) => isSysError(e, "EACCES"));
  const h = await fake.spawn({ argv: ["app"], newSession: false });
  assert.equal(h.pgid, null);
  await assert.rejects(
    fake.signal({ pid: h.pid, group: true }, "SIGTERM"),
    (e) => isSysError(e, "ESRCH"),
  );
  assert.equal(fake.faults.callsOf("spawn").length, 2);
  await fake.signal({ pid: h.pid }, "SIGKILL");
});
