/**
 * A real Prometheus scraping a dev-mode node, as metrics/prometheus_test.ts
 * and bench/overhead_bench.ts both run it: a reader's client certificate
 * issued through the API, a prometheus.yml that scrapes `GET /metrics` over
 * mutual TLS with it, Prometheus started on that file, and instant queries
 * against its HTTP API. Test and bench support, not shipped in the image.
 *
 * @module
 */
import { join } from "node:path";
import { createMachineClient } from "./create_machine_client.ts";
import { Role } from "../gen/machined/v1/machine_pb.ts";
import { readClientConfig, resolveCredentials } from "../../pki/mod.ts";

/** What {@link writeScrapeConfig} needs. */
export interface ScrapeConfigOptions {
  /** Where the certificate files and prometheus.yml go. */
  dir: string;
  /** The dev node's state directory (its admin `machinectl.yaml`). */
  stateDir: string;
  /** The node's API port on 127.0.0.1. */
  port: number;
  /** Prometheus's scrape interval and timeout, in seconds. */
  intervalS: number;
  timeoutS: number;
}

/**
 * Issue a reader certificate through the node's API (as its admin) and
 * write a prometheus.yml that scrapes the node with it; returns its path.
 */
export async function writeScrapeConfig(o: ScrapeConfigOptions): Promise<string> {
  const admin = resolveCredentials(await readClientConfig(join(o.stateDir, "machinectl.yaml")));
  const client = createMachineClient({ ...admin, endpoint: `127.0.0.1:${o.port}` });
  const issued = await client.api.generateClientConfiguration({
    role: Role.READER,
    name: "prometheus",
  });
  client.close();
  const files = {
    ca: join(o.dir, "ca.crt"),
    crt: join(o.dir, "reader.crt"),
    key: join(o.dir, "reader.key"),
  };
  await Deno.writeTextFile(files.ca, issued.caPem);
  await Deno.writeTextFile(files.crt, issued.crtPem);
  await Deno.writeTextFile(files.key, issued.keyPem, { mode: 0o600 });
  const path = join(o.dir, "prometheus.yml");
  await Deno.writeTextFile(
    path,
    [
      "global:",
      `  scrape_interval: ${o.intervalS}s`,
      `  scrape_timeout: ${o.timeoutS}s`,
      "scrape_configs:",
      "  - job_name: machined",
      "    scheme: https",
      "    tls_config:",
      `      ca_file: ${files.ca}`,
      `      cert_file: ${files.crt}`,
      `      key_file: ${files.key}`,
      "    static_configs:",
      `      - targets: ["127.0.0.1:${o.port}"]`,
      "",
    ].join("\n"),
  );
  return path;
}

/**
 * Start Debian's `prometheus` on `config`, its TSDB under `dir`, its web API
 * on `web` (host:port). The caller stops it ({@link stopPrometheus}).
 */
export function startPrometheus(
  config: string,
  dir: string,
  web: string,
  stderr: "null" | "piped" = "null",
): Deno.ChildProcess {
  return new Deno.Command("prometheus", {
    args: [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "tsdb")}`,
      `--web.listen-address=${web}`,
    ],
    stdout: "null",
    stderr,
    stdin: "null",
  }).spawn();
}

/** Stop a Prometheus {@link startPrometheus} started (none: nothing to do). */
export async function stopPrometheus(prom: Deno.ChildProcess | undefined): Promise<void> {
  if (!prom) return;
  prom.kill("SIGTERM");
  await prom.status;
}

/** One series of an instant query's answer. */
export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query against Prometheus at `web`; undefined when it has no series (yet). */
export async function promQuery(web: string, q: string): Promise<PromSample[] | undefined> {
  const res = await fetch(`http://${web}/api/v1/query?query=${encodeURIComponent(q)}`);
  const result = (await res.json())?.data?.result as PromSample[] | undefined;
  return result?.length ? result : undefined;
}

/** The first series' value of an instant query as a number; undefined without one. */
export async function promValue(web: string, q: string): Promise<number | undefined> {
  const v = (await promQuery(web, q))?.[0]?.value?.[1];
  return v === undefined ? undefined : Number(v);
}
