/**
 * One suite that both process backends pass: the fake always, the native one
 * as root. Each backend supplies {@link ProcessPrograms}: specs with the same
 * observable behaviour (a shell script natively, a scripted FakeProcess in
 * the fake), so the fake's semantics are checked against the kernel's.
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import type { ProcessBackend, ProcessExit, ProcessSpec } from "./backend.ts";
import { readLines } from "./lines.ts";

/** Specs for programs with agreed behaviour. */
export interface ProcessPrograms {
  /** Exits with `code` at once. */
  exitWith(code: number): ProcessSpec;
  /** Writes these lines to stdout and stderr, then exits with `code`. */
  print(stdout: string[], stderr: string[], code: number): ProcessSpec;
  /** Writes "ready" to stdout, then runs until a signal kills it. */
  sleeper(): ProcessSpec;
  /** Writes "ready", ignores SIGTERM, dies on SIGKILL. */
  termIgnorer(): ProcessSpec;
  /** A program that does not exist. */
  missing(): ProcessSpec;
}

/** A backend under test with its programs. */
export interface ProcessFixture {
  backend: ProcessBackend;
  programs: ProcessPrograms;
  teardown?: () => Promise<void>;
}

/** Reject with a named timeout unless `p` settles within `ms`; never leaks the timer. */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function allLines(stream: ReadableStream<Uint8Array> | null): Promise<string[]> {
  assert.ok(stream, "expected a piped stream");
  const out: string[] = [];
  for await (const line of readLines(stream)) out.push(line);
  return out;
}

/** Wait for the "ready" line, then keep draining (and discarding) the rest. */
async function awaitReady(stream: ReadableStream<Uint8Array> | null): Promise<void> {
  assert.ok(stream);
  const lines = readLines(stream);
  const first = await withTimeout(lines.next(), 5000, "ready line");
  assert.equal(first.value, "ready");
  (async () => {
    for await (const _ of lines);
  })();
}

/** Register the suite's tests under `name`. */
export function processBackendConformance(
  name: string,
  fixture: () => Promise<ProcessFixture>,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (f: ProcessFixture) => Promise<void>) =>
    Deno.test({
      name: `${name}: ${title}`,
      ignore: options.ignore,
      fn: async () => {
        const f = await fixture();
        try {
          await fn(f);
        } finally {
          await f.backend.close();
          await f.teardown?.();
        }
      },
    });

  test("reports the exit code on the handle and on exits()", async ({ backend, programs }) => {
    const exits = backend.exits();
    const handle = await backend.spawn({ ...programs.exitWith(3), stdout: "null", stderr: "null" });
    const exit = await withTimeout(handle.exited, 5000, "exit");
    assert.deepEqual(exit, { pid: handle.pid, code: 3, signal: null, coreDumped: false });
    let seen: ProcessExit | undefined;
    for await (const e of exits) {
      if (e.pid === handle.pid) {
        seen = e;
        break;
      }
    }
    assert.deepEqual(seen, exit);
  });

  test("delivers stdout and stderr separately, in order, then EOF", async ({ backend, programs }) => {
    const handle = await backend.spawn(programs.print(["one", "two words"], ["oops"], 0));
    const [out, err, exit] = await withTimeout(
      Promise.all([allLines(handle.stdout), allLines(handle.stderr), handle.exited]),
      5000,
      "output",
    );
    assert.deepEqual(out, ["one", "two words"]);
    assert.deepEqual(err, ["oops"]);
    assert.equal(exit.code, 0);
  });

  test("runs in its own process group by default", async ({ backend, programs }) => {
    const handle = await backend.spawn({ ...programs.exitWith(0), stdout: "null", stderr: "null" });
    assert.equal(handle.pgid, handle.pid);
    assert.equal(handle.stdout, null);
    await withTimeout(handle.exited, 5000, "exit");
  });

  test("SIGTERM kills a default process; the exit names the signal", async ({ backend, programs }) => {
    const handle = await backend.spawn(programs.sleeper());
    await awaitReady(handle.stdout);
    await backend.signal({ pid: handle.pid }, "SIGTERM");
    const exit = await withTimeout(handle.exited, 5000, "exit");
    assert.equal(exit.code, null);
    assert.equal(exit.signal, "SIGTERM");
  });

  test("a SIGTERM-ignoring process survives until SIGKILL", async ({ backend, programs }) => {
    const handle = await backend.spawn(programs.termIgnorer());
    await awaitReady(handle.stdout);
    await backend.signal({ pid: handle.pid }, "SIGTERM");
    const early = await Promise.race([
      handle.exited.then(() => "exited"),
      new Promise((r) => setTimeout(r, 200, "running")),
    ]);
    assert.equal(early, "running");
    await backend.signal({ pid: handle.pid, group: true }, "SIGKILL");
    const exit = await withTimeout(handle.exited, 5000, "exit");
    assert.equal(exit.signal, "SIGKILL");
  });

  test("signalling a reaped process fails with ESRCH", async ({ backend, programs }) => {
    const handle = await backend.spawn({ ...programs.exitWith(0), stdout: "null", stderr: "null" });
    await withTimeout(handle.exited, 5000, "exit");
    await assert.rejects(
      backend.signal({ pid: handle.pid }, "SIGTERM"),
      (e) => isSysError(e, "ESRCH"),
    );
  });

  test("reports the sandbox in force; none without one", reportsSandbox);

  test("a missing program fails the spawn with ENOENT from execve", async ({ backend, programs }) => {
    await assert.rejects(backend.spawn(programs.missing()), (e) => {
      assert.ok(isSysError(e, "ENOENT"), String(e));
      assert.equal(e.op, "execve");
      return true;
    });
  });
}

/** A sandboxed spawn reports its sandbox (what the kernel shows, for the native backend). */
async function reportsSandbox({ backend, programs }: ProcessFixture): Promise<void> {
  const handle = await backend.spawn({
    ...programs.sleeper(),
    noNewPrivs: true,
    sandbox: { seccomp: "default", capabilities: ["CAP_NET_BIND_SERVICE", "CAP_CHOWN"] },
  });
  await awaitReady(handle.stdout);
  assert.deepEqual(handle.sandbox, {
    profile: "default",
    seccomp: "filter",
    noNewPrivs: true,
    effective: ["CAP_CHOWN", "CAP_NET_BIND_SERVICE"],
    bounding: ["CAP_CHOWN", "CAP_NET_BIND_SERVICE"],
    ambient: ["CAP_CHOWN", "CAP_NET_BIND_SERVICE"],
  });
  await backend.signal({ pid: handle.pid, group: true }, "SIGKILL");
  await withTimeout(handle.exited, 5000, "exit");
  const plain = await backend.spawn({ ...programs.exitWith(0), stdout: "null", stderr: "null" });
  assert.equal(plain.sandbox, null);
  await withTimeout(plain.exited, 5000, "exit");
}
