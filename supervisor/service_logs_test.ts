import assert from "node:assert/strict";
import { LogRing } from "../logs/mod.ts";
import { RotatingLogFile } from "./rotating_log_file.ts";
import { MACHINED_LOG_ID, ServiceLogs, UnknownLogError } from "./service_logs.ts";

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

Deno.test("service rings are bounded and tail/follow work", async () => {
  const logs = new ServiceLogs({ ringLines: 3 });
  for (let i = 1; i <= 5; i++) logs.push("a", "stdout", `line ${i}`);
  assert.deepEqual((await collect(logs.read("a"))).map((l) => l.text), [
    "line 3",
    "line 4",
    "line 5",
  ]);
  assert.deepEqual((await collect(logs.read("a", { tail: 1 }))).map((l) => l.text), ["line 5"]);
  const abort = new AbortController();
  const followed: string[] = [];
  const follower = (async () => {
    for await (const l of logs.read("a", { tail: 0, follow: true, signal: abort.signal })) {
      followed.push(l.text);
      if (followed.length === 2) abort.abort();
    }
  })();
  logs.push("a", "stderr", "six");
  logs.push("a", "stdout", "seven");
  await follower;
  assert.deepEqual(followed, ["six", "seven"]);
});

Deno.test("machined's own ring is served under its id; unknown ids are typed errors", async () => {
  const own = new LogRing(10);
  own.push("log", "[info] boot: hello");
  const logs = new ServiceLogs({ machinedLog: own });
  assert.ok(logs.has(MACHINED_LOG_ID));
  assert.deepEqual((await collect(logs.read(MACHINED_LOG_ID))).map((l) => l.text), [
    "[info] boot: hello",
  ]);
  assert.throws(() => logs.read("nope"), UnknownLogError);
});

Deno.test("files start with the ring's backlog and rotate by size keeping N files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-logs-" });
  try {
    const logs = new ServiceLogs({ rotation: { maxBytes: 200, keep: 2 }, now: () => 0 });
    logs.push("a", "stdout", "early");
    await logs.setDirectory(dir);
    for (let i = 0; i < 40; i++) logs.push("a", "stdout", `line ${String(i).padStart(3, "0")}`);
    await logs.flush();
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(names, ["a.log", "a.log.1", "a.log.2"]);
    for (const n of names) assert.ok(Deno.statSync(`${dir}/${n}`).size <= 200, n);
    const current = Deno.readTextFileSync(`${dir}/a.log`).trimEnd().split("\n");
    assert.equal(current.at(-1), "1970-01-01T00:00:00.000Z stdout line 039");
    await logs.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a rotating file with keep 0 truncates instead of keeping old files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-logs-" });
  try {
    const f = new RotatingLogFile(`${dir}/x.log`, { maxBytes: 10, keep: 0 });
    for (let i = 0; i < 5; i++) f.append("123456");
    await f.close();
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["x.log"]);
    assert.equal(Deno.readTextFileSync(`${dir}/x.log`), "123456\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a log file that cannot be written is reported once, then again when it recovers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-logs-" });
  try {
    const health: Array<[string, string, string]> = [];
    const logs = new ServiceLogs({
      now: () => 0,
      onFileHealth: (id, path, e) => health.push([id, path, e ? (e as Error).name : "ok"]),
    });
    await Deno.mkdir(`${dir}/a.log`); // the file's path is taken by a directory: EISDIR
    await logs.setDirectory(dir);
    logs.push("a", "stdout", "one");
    await logs.flush();
    logs.push("a", "stdout", "two");
    await logs.flush();
    assert.deepEqual(
      health,
      [["a", `${dir}/a.log`, "IsADirectory"]],
      "reported once, not per line",
    );
    assert.equal(logs.ring("a").tail().length, 2, "the ring still has every line");
    await Deno.remove(`${dir}/a.log`);
    logs.push("a", "stdout", "three");
    await logs.flush();
    assert.deepEqual(health.at(-1), ["a", `${dir}/a.log`, "ok"]);
    assert.match(Deno.readTextFileSync(`${dir}/a.log`), /three/);
    await logs.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ring_lines resizes every service ring live and sizes new ones", () => {
  const logs = new ServiceLogs({ ringLines: 5, now: () => 0 });
  for (let i = 0; i < 5; i++) logs.push("a", "stdout", `a${i}`);
  logs.setRingLines(3);
  assert.deepEqual(logs.ring("a").tail().map((l) => l.text), ["a2", "a3", "a4"], "newest kept");
  assert.equal(logs.ring("b").capacity, 3, "new rings get the new size");
  logs.setRingLines(10);
  for (let i = 5; i < 12; i++) logs.push("a", "stdout", `a${i}`);
  assert.equal(logs.ring("a").tail().length, 10, "grown rings keep more lines");
  assert.equal(logs.ring("a").tail().at(-1)?.text, "a11");
});
