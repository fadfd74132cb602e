/**
 * Test support: machined-edge (the API's network edge) started as a child
 * process in front of a test's internal server, from the same ProcessSpec
 * machined uses, its port read from the ready line it prints first. Not for
 * production.
 */
import { join } from "node:path";
import type { CertificateAuthority, KeyedCertificate } from "../../pki/mod.ts";
import { APID_DEFAULTS } from "./apid_options.ts";
import { edgeBinaryPath, type EdgeOptions, edgeProcessSpec } from "./edge_process_spec.ts";

/** Whether the machined-edge binary has been built (`deno task native`). */
export function edgeBinaryBuilt(): boolean {
  try {
    return Deno.statSync(edgeBinaryPath()).isFile;
  } catch {
    return false;
  }
}

/** Options of {@link startEdgeServer}. */
export interface EdgeServerOptions {
  /** Absent only with `maintenance`. */
  readonly ca?: Pick<CertificateAuthority, "certPem">;
  readonly maintenance?: boolean;
  readonly server: KeyedCertificate;
  readonly socketPath: string;
  /** Where the PKI files are written (the edge reads them at start). */
  readonly pkiDir: string;
  readonly hostname?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly maxConcurrentStreams?: number;
  readonly readMaxBytes?: number;
  readonly writeMaxBytes?: number;
  readonly limits?: EdgeOptions;
}

/** A running machined-edge child. */
export interface EdgeServer {
  readonly pid: number;
  readonly port: number;
  readonly hostname: string;
  /** SIGTERM, wait for the exit. Idempotent. */
  close(): Promise<void>;
}

/** Writes the PKI directory, spawns machined-edge and waits (30 s) for its ready line. */
export async function startEdgeServer(o: EdgeServerOptions): Promise<EdgeServer> {
  await Deno.mkdir(o.pkiDir, { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(join(o.pkiDir, "server.crt"), o.server.certPem);
  await Deno.writeTextFile(join(o.pkiDir, "server.key"), o.server.keyPem, { mode: 0o600 });
  if (o.ca) await Deno.writeTextFile(join(o.pkiDir, "ca.crt"), o.ca.certPem);
  else await Deno.remove(join(o.pkiDir, "ca.crt")).catch(() => {});
  if (o.maintenance) await Deno.writeTextFile(join(o.pkiDir, "maintenance"), "");
  return await spawnEdge(o);
}

/**
 * Spawns machined-edge on the PKI directory as it is (written by the test, or
 * by api/host/api_pki.ts) and waits (30 s) for its ready line.
 */
export async function spawnEdge(
  o: Omit<EdgeServerOptions, "ca" | "maintenance" | "server">,
): Promise<EdgeServer> {
  const hostname = o.hostname ?? "127.0.0.1";
  const spec = edgeProcessSpec({
    apid: {
      ...APID_DEFAULTS,
      pkiDir: o.pkiDir,
      socketPath: o.socketPath,
      hostname,
      port: o.port ?? 0,
      ...(o.maxConcurrentStreams ? { maxConcurrentStreams: o.maxConcurrentStreams } : {}),
      ...(o.readMaxBytes ? { readMaxBytes: o.readMaxBytes } : {}),
      ...(o.writeMaxBytes ? { writeMaxBytes: o.writeMaxBytes } : {}),
    },
    limits: o.limits,
  });
  const child = new Deno.Command(spec.argv[0], {
    args: spec.argv.slice(1),
    clearEnv: true,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let ready: { port: number };
  try {
    const first = await withTimeout(lines.read(), 30_000, "machined-edge ready");
    if (first.done) throw new Error(`machined-edge exited: ${JSON.stringify(await child.status)}`);
    ready = JSON.parse(first.value.split("\n")[0]);
  } catch (e) {
    child.kill("SIGKILL");
    await child.status;
    throw e;
  }
  // Keep reading stdout so the child never blocks on a full pipe.
  const drained = (async () => {
    while (!(await lines.read().catch(() => ({ done: true }))).done) { /* discard */ }
  })();
  let closing: Promise<void> | undefined;
  return {
    pid: child.pid,
    port: ready.port,
    hostname,
    close() {
      closing ??= (async () => {
        try {
          child.kill("SIGTERM");
        } catch {
          // already gone
        }
        await child.status;
        await drained;
      })();
      return closing;
    },
  };
}

/** Rejects when `p` does not settle within `ms`. */
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
