/**
 * Starting one service process: directories and files first (e.g.
 * containerd's config.toml, written atomically), credentials resolved, the
 * cgroup prepared with its limits, then spawn in a new session (its own
 * process group) with stdout and stderr piped line by line into its log.
 */
import type { CgroupBackend } from "../platform/cgroup/mod.ts";
import { type ProcessBackend, type ProcessHandle, readLines } from "../platform/process/mod.ts";
import type { CapabilityName, ProcessSpec } from "../platform/process/mod.ts";
import type { ServiceSpecSpec } from "../resources/mod.ts";
import type { ServiceLogs } from "./service_logs.ts";
import { resolveAccount } from "./user_lookup.ts";

/** The PATH a service gets unless its env sets one. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** What launching needs. */
export interface LaunchDeps {
  readonly process: ProcessBackend;
  readonly cgroups?: CgroupBackend;
  readonly logs: ServiceLogs;
  /** Root for /etc/passwd lookups. @default "" */
  readonly accountsRoot?: string;
}

/** A launched service process and the spec pieces its probes reuse. */
export interface Launched {
  readonly handle: ProcessHandle;
  readonly processSpec: Omit<ProcessSpec, "argv">;
  /** Resolves when both output pipes reached EOF. */
  readonly output: Promise<void>;
}

/** Prepares and spawns `spec` as service `id`. @throws the failing step's error. */
export async function launchService(
  id: string,
  spec: ServiceSpecSpec,
  deps: LaunchDeps,
): Promise<Launched> {
  for (const dir of spec.dirs) await Deno.mkdir(dir, { recursive: true, mode: 0o755 });
  for (const f of spec.files) await writeAtomic(f.path, f.content, f.mode ?? 0o644);
  const uid = await resolveAccount("user", spec.user, deps.accountsRoot);
  const gid = await resolveAccount("group", spec.group, deps.accountsRoot);
  const cgroup = deps.cgroups ? await deps.cgroups.prepare(id, spec.limits) : undefined;
  const processSpec: Omit<ProcessSpec, "argv"> = {
    env: { PATH: DEFAULT_PATH, ...spec.env },
    cwd: spec.cwd,
    ...credentials(uid, gid),
    ...(cgroup ? { cgroup } : {}),
    newSession: true,
    ...processSandbox(spec),
  };
  const handle = await deps.process.spawn({
    ...processSpec,
    argv: [...spec.command],
    stdout: "pipe",
    stderr: "pipe",
  });
  const pump = async (stream: ReadableStream<Uint8Array> | null, name: "stdout" | "stderr") => {
    if (!stream) return;
    try {
      for await (const line of readLines(stream)) deps.logs.push(id, name, line);
    } catch {
      // A pipe error ends capture; the exit is reported through `exited`.
    }
  };
  const output = Promise.all([pump(handle.stdout, "stdout"), pump(handle.stderr, "stderr")])
    .then(() => {});
  return { handle, processSpec, output };
}

/** The spec's sandbox for the process backend (exec probes get the same). Pure. */
export function processSandbox(
  spec: ServiceSpecSpec,
): Pick<ProcessSpec, "noNewPrivs" | "sandbox"> {
  const s = spec.sandbox;
  if (!s) return {};
  const capabilities = s.capabilities === null
    ? {}
    : { capabilities: s.capabilities as CapabilityName[] };
  const readOnly = s.readOnlyPaths?.length ? { readOnlyPaths: s.readOnlyPaths } : {};
  const masked = s.maskedPaths?.length ? { maskedPaths: s.maskedPaths } : {};
  return {
    noNewPrivs: s.noNewPrivs,
    sandbox: {
      seccomp: s.seccomp,
      ...(s.profile ? { seccompProfile: s.profile } : {}),
      ...capabilities,
      ...readOnly,
      ...masked,
    },
  };
}

/** uid/gid only when they differ from machined's own (dev mode runs unprivileged). */
function credentials(uid: number, gid: number): { uid?: number; gid?: number } {
  const same = uid === Deno.uid() && gid === Deno.gid();
  return same ? {} : { uid, gid };
}

/** Writes `content` to a temporary sibling and renames it over `path`. */
export async function writeAtomic(path: string, content: string, mode: number): Promise<void> {
  const dir = path.replace(/\/[^/]*$/, "") || "/";
  await Deno.mkdir(dir, { recursive: true });
  const tmp = `${path}.tmp-${Deno.pid}`;
  await Deno.writeTextFile(tmp, content, { mode });
  await Deno.chmod(tmp, mode);
  await Deno.rename(tmp, path);
}
