/**
 * The attack bench's node (bench/attack.ts): a dev-mode machined with its real
 * edge (machined-edge as its child), the admin's credentials from the dev
 * node's client config, a reader certificate issued from the dev node's CA
 * (the attacker of issue 25 holds one), and the node's /metrics through the
 * edge. Every scenario starts its own node, so one scenario's leftovers never
 * count in the next one's idle figure.
 */
import http2 from "node:http2";
import { join } from "node:path";
import {
  issueClientCertificate,
  loadCertificateAuthority,
  PKI_FILES,
  readClientConfig,
  resolveCredentials,
} from "../pki/mod.ts";
import { createMachineClient } from "../api/client/mod.ts";
import { freePort, waitFor } from "../dev/testing.ts";
import { type DevNodeOptions, startDevNode } from "./soak_node.ts";
import { anonSplit, mib, type ProcMemDetail, procMemDetail } from "./proc.ts";
import { memMiB, splitMiB } from "./attack_report.ts";

/** A client's TLS material. */
export interface Creds {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** A running attack node; {@link AttackNode.stop} ends it and removes its state. */
export interface AttackNode {
  readonly port: number;
  readonly machinedPid: number;
  readonly edgePid: number;
  readonly stateDir: string;
  readonly admin: Creds;
  /** machined's and the edge's memory now. */
  mem(): Promise<{ machined: ProcMemDetail; edge: ProcMemDetail }>;
  /** Where machined's and the edge's anonymous memory lives now (bench/proc.ts's AnonSplit), MiB. */
  split(): Promise<{ machined: ReturnType<typeof splitMiB>; edge: ReturnType<typeof splitMiB> }>;
  /** A fresh client certificate for `role` from the node's CA. */
  issue(role: "os:reader" | "os:admin", name: string): Promise<Creds>;
  /** GET /metrics through the edge as the admin (machined's text and the edge's counters). */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a dev node and waits until its API answers through the edge. */
export async function startAttackNode(o: DevNodeOptions = {}): Promise<AttackNode> {
  const dir = await Deno.makeTempDir({ prefix: "machined-attack-" });
  const stateDir = join(dir, "state");
  const port = freePort();
  const node = await startDevNode(stateDir, port, o);
  const admin = resolveCredentials(await readClientConfig(join(stateDir, "machinectl.yaml")));
  const client = createMachineClient({ ...admin, endpoint: `127.0.0.1:${port}` });
  try {
    await waitFor("the edge answers", 30_000, () => client.api.version({}).then(() => true));
  } finally {
    client.close();
  }
  const pkiDir = join(stateDir, "pki");
  return {
    port,
    machinedPid: node.dev.pid,
    edgePid: node.apid,
    stateDir,
    admin,
    mem: async () => ({
      machined: await procMemDetail(node.dev.pid),
      edge: await procMemDetail(node.apid),
    }),
    split: async () => ({
      machined: splitMiB(await anonSplit(node.dev.pid)),
      edge: splitMiB(await anonSplit(node.apid)),
    }),
    async issue(role, name) {
      const ca = await loadCertificateAuthority(
        await Deno.readTextFile(join(pkiDir, PKI_FILES.caCert)),
        await Deno.readTextFile(join(pkiDir, PKI_FILES.caKey)),
        "the dev node's PKI directory",
      );
      const c = await issueClientCertificate({ ca, name, role });
      return { caPem: ca.certPem, certPem: c.certPem, keyPem: c.keyPem };
    },
    metrics: () => getText(port, admin, "/metrics"),
    async stop() {
      try {
        node.dev.kill("SIGTERM");
      } catch { /* already gone */ }
      await node.dev.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** GETs `path` over HTTP/2 with mTLS on a fresh connection; the body as text, bounded to 10 s. */
export function getText(port: number, creds: Creds, path: string): Promise<string> {
  const session = connectTls(port, creds);
  return getOn(session, path).finally(() => session.destroy());
}

/**
 * A getter that keeps one connection for every GET (re-made once it closed),
 * as Prometheus keeps its scrape connection: the samples then open no new
 * connection to the node. `close()` ends it.
 */
export function keptGetter(port: number, creds: Creds) {
  let session: http2.ClientHttp2Session | undefined;
  return {
    get(path: string): Promise<string> {
      if (!session || session.closed || session.destroyed) session = connectTls(port, creds);
      return getOn(session, path);
    },
    close: () => session?.destroy(),
  };
}

function connectTls(port: number, creds: Creds): http2.ClientHttp2Session {
  const session = http2.connect(`https://127.0.0.1:${port}`, {
    ca: creds.caPem,
    cert: creds.certPem,
    key: creds.keyPem,
  });
  session.on("error", () => {}); // each GET sees its own failure
  return session;
}

/** GETs `path` on `session`; the body as text, bounded to 10 s. */
function getOn(session: http2.ClientHttp2Session, path: string): Promise<string> {
  let onError: (e: unknown) => void = () => {};
  const done = new Promise<string>((resolve, reject) => {
    onError = reject;
    session.once("error", onError);
    const req = session.request({ ":method": "GET", ":path": path });
    let text = "";
    let status = 0;
    req.setEncoding("utf8");
    req.on("response", (h) => status = Number(h[":status"]));
    req.on("data", (c: string) => text += c);
    req.on(
      "end",
      () => status === 200 ? resolve(text) : reject(new Error(`GET ${path}: ${status} ${text}`)),
    );
    req.on("error", reject);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`GET ${path}: no answer in 10 s`)), 10_000);
  });
  return Promise.race([done, timeout]).finally(() => {
    clearTimeout(timer);
    session.off("error", onError);
  });
}

/**
 * The samples of the Prometheus text whose name (and labels) start with
 * `prefix`, as `name{labels}` → value.
 */
export function metricValues(text: string, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const at = line.lastIndexOf(" ");
    out[line.slice(0, at)] = Number(line.slice(at + 1));
  }
  return out;
}

/**
 * Reads machined's and the edge's memory in detail (MiB), and machined's V8
 * heap in use (bytes, NaN when /metrics does not answer) through the edge.
 */
export function memDetail(
  machinedPid: number,
  edgePid: number,
  api: { port: number; creds: Creds; get?: (path: string) => Promise<string> },
) {
  const get = api.get ?? ((path: string) => getText(api.port, api.creds, path));
  const heap = () =>
    get("/metrics").then(
      (t) => metricValues(t, "machined_process_heap_used_bytes ")[HEAP] ?? NaN,
      () => NaN,
    );
  return {
    heap,
    /**
     * One scrape: machined's V8 heap in use and glibc's heap (in use, free
     * but kept) and V8's external memory, MiB (NaN when /metrics does not say).
     */
    heapAndMalloc: () =>
      get("/metrics").then(
        (t) => {
          const v = metricValues(t, "machined_");
          const at = (name: string) => mib((v[name] ?? NaN) / 1024);
          return {
            heapUsed: at(HEAP),
            inUse: at("machined_malloc_in_use_bytes"),
            free: at("machined_malloc_free_bytes"),
            external: at("machined_process_external_bytes"),
          };
        },
        () => ({ heapUsed: NaN, inUse: NaN, free: NaN, external: NaN }),
      ),
    read: async () => ({
      machined: memMiB(await procMemDetail(machinedPid)),
      edge: memMiB(await procMemDetail(edgePid)),
      heapUsedMiB: mib((await heap()) / 1024),
      anonSplit: {
        machined: splitMiB(await anonSplit(machinedPid)),
        edge: splitMiB(await anonSplit(edgePid)),
      },
    }),
  };
}
const HEAP = "machined_process_heap_used_bytes";

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
