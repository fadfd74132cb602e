/**
 * Privileged tests that must not touch the host (mounts, hostname, reboot)
 * re-run their own test file in fresh namespaces via `unshare(1)`, started
 * through the native process backend (machined never uses Deno.Command for
 * children). The inner run sees {@link insideTestNamespace} true and checks
 * with {@link assertNotHostNamespace} that it really is isolated before it
 * changes anything.
 *
 * @example
 * ```ts
 * if (!insideTestNamespace("mount")) {
 *   Deno.test("mount (private namespace)", async () => {
 *     const r = await rerunInNamespace("mount", ["--mount", "--propagation", "private"], import.meta.url);
 *     if (r.code !== 0) throw new Error(r.output);
 *   });
 * }
 * ```
 * @module
 */
import { nativeProcessBackend, readLines } from "./process/mod.ts";

const KIND_ENV = "MACHINED_TEST_NAMESPACE";
const HOST_NS_ENV = "MACHINED_TEST_HOST_NS";

/** The namespaces whose identity {@link assertNotHostNamespace} can compare. */
export type NamespaceName = "mnt" | "uts" | "pid" | "net";

/** Whether this process is the inner run for `kind`. */
export function insideTestNamespace(kind: string): boolean {
  return Deno.env.get(KIND_ENV) === kind;
}

function nsIds(): Record<NamespaceName, string> {
  const read = (n: string) => Deno.readLinkSync(`/proc/self/ns/${n}`);
  return { mnt: read("mnt"), uts: read("uts"), pid: read("pid"), net: read("net") };
}

/**
 * Throw unless namespace `ns` differs from the one the outer test ran in.
 * For `pid`, `/proc/self/ns/pid` names the namespace of this process (its
 * children would be in `pid_for_children`), so an unshared PID 1 passes.
 * @throws Error when the namespace is the host's; nothing may be changed then.
 */
export function assertNotHostNamespace(ns: NamespaceName): void {
  const host = JSON.parse(Deno.env.get(HOST_NS_ENV) ?? "{}") as Partial<
    Record<NamespaceName, string>
  >;
  const mine = nsIds()[ns];
  if (!host[ns] || host[ns] === mine) {
    throw new Error(`Refusing to run: ${ns} namespace ${mine} is the host's (${host[ns]})`);
  }
}

/** Exit status and combined output of the inner run. */
export interface InnerRun {
  code: number | null;
  signal: string | null;
  output: string;
}

/**
 * Run `deno test` (or `deno run` with `mode: "run"`) on `file` under
 * `unshare <unshareArgs>`, with {@link insideTestNamespace}(`kind`) true inside.
 */
export async function rerunInNamespace(
  kind: string,
  unshareArgs: string[],
  file: string | URL,
  options: { mode?: "test" | "run"; timeoutMs?: number } = {},
): Promise<InnerRun> {
  const path = file instanceof URL ? file.pathname : new URL(file).pathname;
  const mode = options.mode ?? "test";
  const backend = nativeProcessBackend();
  const handle = await backend.spawn({
    argv: ["unshare", ...unshareArgs, "--", Deno.execPath(), mode, "-A", path],
    env: {
      ...Deno.env.toObject(),
      NO_COLOR: "1",
      [KIND_ENV]: kind,
      [HOST_NS_ENV]: JSON.stringify(nsIds()),
    },
    cwd: new URL("../", import.meta.url).pathname,
    newSession: true,
  });
  const lines: string[] = [];
  const drain = async (s: ReadableStream<Uint8Array> | null) => {
    if (s) { for await (const l of readLines(s)) lines.push(l); }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const killer = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      lines.push(`(killed after ${timeoutMs} ms)`);
      backend.signal({ pid: handle.pid, group: true }, "SIGKILL").catch(() => {}).then(resolve);
    }, timeoutMs);
  });
  try {
    const [exit] = await Promise.all([
      handle.exited,
      drain(handle.stdout),
      drain(handle.stderr),
    ]);
    return { code: exit.code, signal: exit.signal, output: lines.join("\n") };
  } finally {
    clearTimeout(timer);
    void killer;
  }
}
