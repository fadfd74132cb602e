/**
 * The native process backend against the kernel. Needs root for uid/gid
 * changes, cgroup placement and subreaper adoption; ignored otherwise.
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { nativeProcessBackend } from "./backend_native.ts";
import {
  processBackendConformance,
  type ProcessPrograms,
  withTimeout,
} from "./backend_conformance.ts";
import type { ProcessExit, ProcessHandle } from "./backend.ts";
import { readLines } from "./lines.ts";

const isRoot = Deno.uid() === 0;
if (!isRoot) console.log("skipping native process tests: they need root (uid/gid, cgroups)");

const ENV = { PATH: "/usr/bin:/bin" };
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const sh = (script: string) => ({ argv: ["/bin/sh", "-c", script], env: ENV });

const programs: ProcessPrograms = {
  exitWith: (code) => sh(`exit ${code}`),
  print: (out, err, code) =>
    sh(
      [
        out.length ? `printf '%s\\n' ${out.map(quote).join(" ")}` : "true",
        err.length ? `printf '%s\\n' ${err.map(quote).join(" ")} >&2` : "true",
        `exit ${code}`,
      ].join("; "),
    ),
  sleeper: () => sh("echo ready; exec sleep 1000"),
  termIgnorer: () => sh("trap '' TERM; echo ready; exec sleep 1000"),
  missing: () => ({ argv: ["/nonexistent/program"], env: ENV }),
};

processBackendConformance(
  "NativeProcessBackend (needs root)",
  () => Promise.resolve({ backend: nativeProcessBackend(), programs }),
  { ignore: !isRoot },
);

async function output(h: ProcessHandle): Promise<{ out: string[]; exit: ProcessExit }> {
  const out: string[] = [];
  const read = (async () => {
    for await (const l of readLines(h.stdout!)) out.push(l);
  })();
  const [exit] = await withTimeout(Promise.all([h.exited, read]), 5000, "process output");
  return { out, exit };
}

/**
 * A test that needs root and, when `missing` is given, more (ignored while
 * `missing` is true); what it needs is part of its name.
 */
function rootTest(
  name: string,
  fn: () => Promise<void>,
  more?: { needs: string; missing: boolean },
) {
  Deno.test({
    name: `native process: ${name} (needs root${more ? `, ${more.needs}` : ""})`,
    ignore: !isRoot || (more?.missing ?? false),
    fn: async () => {
      try {
        await fn();
      } finally {
        await nativeProcessBackend().close();
      }
    },
  });
}

rootTest("drops to uid/gid/groups and sets no_new_privs", async () => {
  const h = await nativeProcessBackend().spawn({
    ...sh("id -u; id -g; id -G; grep NoNewPrivs /proc/self/status; pwd"),
    uid: 65534,
    gid: 65534,
    groups: [65534, 100],
    noNewPrivs: true,
    cwd: "/tmp",
    stderr: "inherit",
  });
  const { out, exit } = await output(h);
  assert.equal(exit.code, 0);
  assert.deepEqual(out, ["65534", "65534", "65534 100", "NoNewPrivs:\t1", "/tmp"]);
});

rootTest("sandboxed processes that exit at once still spawn (status read or null)", async () => {
  const backend = nativeProcessBackend();
  for (let i = 0; i < 50; i++) {
    const h = await backend.spawn({
      argv: ["/bin/true"],
      env: ENV,
      stdout: "null",
      stderr: "null",
      noNewPrivs: true,
      sandbox: { seccomp: "default", capabilities: [] },
    });
    assert.ok(h.sandbox === null || h.sandbox.profile === "default");
    assert.equal((await withTimeout(h.exited, 5000, "exit")).code, 0);
  }
});

rootTest("the environment is exactly the spec's", async () => {
  const h = await nativeProcessBackend().spawn({
    argv: ["env"],
    env: { PATH: "/usr/bin:/bin", ONLY: "this" },
  });
  const { out } = await output(h);
  assert.deepEqual(out.sort(), ["ONLY=this", "PATH=/usr/bin:/bin"]);
});

rootTest("failed steps before exec surface as typed errors", async () => {
  const backend = nativeProcessBackend();
  await assert.rejects(backend.spawn({ ...sh("true"), cwd: "/nonexistent" }), (e) => {
    assert.ok(isSysError(e, "ENOENT") && e.op === "chdir", String(e));
    return true;
  });
  await assert.rejects(backend.spawn({ ...sh("true"), cgroup: "/nonexistent/cg" }), (e) => {
    assert.ok(isSysError(e, "ENOENT") && e.op === "cgroup.procs", String(e));
    return true;
  });
});

rootTest("signalling the process group reaches the whole group", async () => {
  const backend = nativeProcessBackend();
  const h = await backend.spawn(sh("sleep 1000 & echo $!; wait"));
  const lines = readLines(h.stdout!);
  const child = Number((await withTimeout(lines.next(), 5000, "child pid")).value);
  await backend.signal({ pid: h.pid, group: true }, "SIGTERM");
  assert.equal((await withTimeout(h.exited, 5000, "exit")).signal, "SIGTERM");
  // The background sleep got the signal too: it is gone or a zombie soon after
  // (signal delivery to another process is asynchronous; bounded wait, 2 s).
  const stateOf = () =>
    Deno.readTextFile(`/proc/${child}/stat`).then((s) => s.split(") ")[1][0], () => "gone");
  let state = await stateOf();
  for (let i = 0; i < 40 && state !== "gone" && state !== "Z"; i++) {
    await new Promise((r) => setTimeout(r, 50));
    state = await stateOf();
  }
  assert.ok(state === "gone" || state === "Z", `sleep still running: ${state}`);
  for await (const _ of lines);
});

rootTest("orphans are reaped and reported when we are a subreaper", async () => {
  const backend = nativeProcessBackend();
  await backend.setChildSubreaper(true);
  try {
    const exits = backend.exits();
    const h = await backend.spawn(sh("(sleep 0.2; exit 5) & echo $!"));
    const lines = readLines(h.stdout!);
    const grandchild = Number((await withTimeout(lines.next(), 5000, "pid")).value);
    assert.equal((await withTimeout(h.exited, 5000, "parent exit")).code, 0);
    const seen = new Map<number, ProcessExit>();
    await withTimeout(
      (async () => {
        for await (const e of exits) {
          seen.set(e.pid, e);
          if (seen.has(grandchild)) break;
        }
      })(),
      5000,
      "grandchild exit",
    );
    assert.equal(seen.get(grandchild)?.code, 5);
    assert.equal(seen.get(h.pid)?.code, 0);
  } finally {
    await backend.setChildSubreaper(false);
  }
});

/** The cgroup2 mount point, if any. */
async function cgroup2Root(): Promise<string | undefined> {
  const info = await Deno.readTextFile("/proc/self/mountinfo");
  for (const line of info.split("\n")) {
    const [pre, post] = line.split(" - ");
    if (post?.startsWith("cgroup2 ")) return pre.split(" ")[4];
  }
}

const cgroup2 = isRoot ? await cgroup2Root() : undefined;

rootTest("joins a cgroup v2 directory before exec", async () => {
  const dir = `${cgroup2}/machined-test-${Deno.pid}`;
  await Deno.mkdir(dir);
  try {
    const h = await nativeProcessBackend().spawn({ ...sh("cat /proc/self/cgroup"), cgroup: dir });
    const { out, exit } = await output(h);
    assert.equal(exit.code, 0);
    assert.ok(out.includes(`0::/machined-test-${Deno.pid}`), out.join("\n"));
  } finally {
    await Deno.remove(dir);
  }
}, { needs: "a cgroup2 mount", missing: cgroup2 === undefined });

rootTest("spawn latency (fork + exec + reap of /bin/true)", async () => {
  const backend = nativeProcessBackend();
  const n = 50;
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const h = await backend.spawn({ argv: ["/bin/true"], stdout: "null", stderr: "null" });
    await withTimeout(h.exited, 5000, "exit");
  }
  const each = (performance.now() - start) / n;
  console.log(`spawn+reap of /bin/true: ${each.toFixed(2)} ms each over ${n}`);
  assert.ok(each < 200);
});
