/**
 * Nothing machined starts outlives it: dev mode is killed with SIGKILL (no
 * chance to stop anything) and apid, its child, must die at once through the
 * parent-death signal the native spawner sets, closing the API port.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

/** Pids of live (non-zombie) processes whose command line mentions `marker`. */
async function processesMentioning(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmdline = await Deno.readTextFile(`/proc/${e.name}/cmdline`);
      const stat = await Deno.readTextFile(`/proc/${e.name}/stat`);
      if (cmdline.includes(marker) && !/\) Z /.test(stat)) pids.push(Number(e.name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function accepts(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/** Reads `stream` until a line matches `re`; keeps draining afterwards. */
async function waitForLine(stream: ReadableStream<Uint8Array>, re: RegExp, ms: number) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    const m = re.exec(text);
    if (m) {
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return m;
    }
  }
  throw new Error(`no line matching ${re} within ${ms} ms; output:\n${text}`);
}

/** Starts dev mode, stops it with `signal`, and returns when the port closed (ms after the signal). */
async function stopDevMode(signal: Deno.Signal, withinMs: number): Promise<void> {
  const state = await Deno.makeTempDir({ prefix: "machined-lifecycle-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "dev", "--state", state, "--listen", "127.0.0.1:0"],
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  }).spawn();
  try {
    const up = await waitForLine(child.stdout, /API on 127\.0\.0\.1:(\d+)/, 90_000);
    const port = Number(up[1]);
    assert.ok(await accepts(port), "the API port accepts before the kill");
    const apids = (await processesMentioning(state)).filter((p) => p !== child.pid);
    assert.ok(apids.length >= 1, "apid runs as machined's child");

    child.kill(signal);
    const t0 = performance.now();
    let closedAfter = Infinity;
    while (performance.now() - t0 < withinMs + 2_000) {
      if (!(await accepts(port))) {
        closedAfter = performance.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(
      closedAfter < withinMs,
      `API port closed ${closedAfter.toFixed(0)} ms after ${signal} (limit ${withinMs} ms)`,
    );
    let left = await processesMentioning(state);
    for (let i = 0; i < 50 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      left = await processesMentioning(state);
    }
    assert.deepEqual(left, [], "no process machined started is left");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already dead */ }
    await child.status;
    // A failed run must not leave an orphan apid behind on the machine.
    for (const pid of await processesMentioning(state)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    await Deno.remove(state, { recursive: true });
  }
}

Deno.test("dev mode killed with SIGKILL: apid dies with it and the API port closes within 1 s", () =>
  stopDevMode("SIGKILL", 1_000));

Deno.test("dev mode stopped with SIGTERM: it stops apid and nothing is left", () =>
  stopDevMode("SIGTERM", 10_000));
