/**
 * A real Prometheus (Debian's `prometheus`) scrapes a dev-mode node's
 * `GET /metrics` over mutual TLS with a reader's client certificate (issued
 * through the API), and a metric is queried back through Prometheus's HTTP
 * API: node memory, machined's API counters and the scrape's own `up`.
 */
import { equal, ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { drain, freePort, waitFor } from "../dev/testing.ts";
import {
  promQuery,
  startPrometheus,
  stopPrometheus,
  writeScrapeConfig,
} from "../api/client/mod.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

function hasPrometheus(): boolean {
  try {
    return new Deno.Command("prometheus", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("Prometheus scrapes a dev-mode node over mutual TLS as a reader (needs prometheus)", {
  ignore: !hasPrometheus(),
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-prometheus-" });
  const dev = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "dev", "--state", join(dir, "state"), "--listen", "127.0.0.1:0"],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const devOut = drain(dev.stdout);
  const devErr = drain(dev.stderr);
  let prom: Deno.ChildProcess | undefined;
  let promErr = { text: "" };
  try {
    const port = await waitFor("dev mode's API", 120_000, () => {
      const m = /API on 127\.0\.0\.1:(\d+)/.exec(devOut.text);
      return Promise.resolve(m ? Number(m[1]) : undefined);
    }).catch((e) => {
      throw new Error(`${e.message}\n${devOut.text}\n${devErr.text}`);
    });
    const config = await writeScrapeConfig({
      dir,
      stateDir: join(dir, "state"),
      port,
      intervalS: 1,
      timeoutS: 1,
    });
    const web = `127.0.0.1:${freePort()}`;
    prom = startPrometheus(config, dir, web, "piped");
    promErr = drain(prom.stderr!);
    const query = (q: string) => promQuery(web, q);
    const t0 = performance.now();
    const memory = await waitFor(
      "machined_node_memory_total_bytes",
      90_000,
      () => query("machined_node_memory_total_bytes"),
    ).catch((e) => {
      throw new Error(`${e.message}\nprometheus:\n${promErr.text}`);
    });
    console.log(`first sample after ${Math.round(performance.now() - t0)} ms`);
    ok(Number(memory[0].value[1]) > 0, JSON.stringify(memory));
    equal(memory[0].metric.job, "machined");
    const up = await query('up{job="machined"}');
    equal(up?.[0].value[1], "1");
    // Prometheus's own scrapes are counted as Metrics calls by machined.
    const calls = await waitFor(
      "Metrics calls",
      30_000,
      () => query('machined_api_requests_total{method="Metrics",code="OK"}'),
    );
    ok(Number(calls[0].value[1]) >= 1);
    ok(await query("machined_controller_reconciles_total"), "controller metrics are scraped");
    ok(await query("machined_edge_connections_total"), "the edge's metrics are scraped");
  } finally {
    await stopPrometheus(prom);
    dev.kill("SIGTERM");
    await dev.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
