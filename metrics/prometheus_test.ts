/**
 * A real Prometheus (Debian's `prometheus`) scrapes a dev-mode node's
 * `GET /metrics` over mutual TLS with a reader's client certificate (issued
 * through the API), and a metric is queried back through Prometheus's HTTP
 * API: node memory, machined's API counters and the scrape's own `up`.
 */
import { equal, ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { createMachineClient } from "../api/client/mod.ts";
import { Role } from "../api/gen/machined/v1/machine_pb.ts";
import { readClientConfig, resolveCredentials } from "../pki/mod.ts";
import { drain, freePort, waitFor } from "../dev/testing.ts";

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
    // A reader's certificate, issued by the node through the API.
    const admin = resolveCredentials(await readClientConfig(join(dir, "state", "machinectl.yaml")));
    const client = createMachineClient({ ...admin, endpoint: `127.0.0.1:${port}` });
    const issued = await client.api.generateClientConfiguration({
      role: Role.READER,
      name: "prometheus",
    });
    client.close();
    const files = {
      ca: join(dir, "ca.crt"),
      crt: join(dir, "reader.crt"),
      key: join(dir, "reader.key"),
    };
    await Deno.writeTextFile(files.ca, issued.caPem);
    await Deno.writeTextFile(files.crt, issued.crtPem);
    await Deno.writeTextFile(files.key, issued.keyPem, { mode: 0o600 });
    await Deno.writeTextFile(
      join(dir, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 1s",
        "  scrape_timeout: 1s",
        "scrape_configs:",
        "  - job_name: machined",
        "    scheme: https",
        "    tls_config:",
        `      ca_file: ${files.ca}`,
        `      cert_file: ${files.crt}`,
        `      key_file: ${files.key}`,
        "    static_configs:",
        `      - targets: ["127.0.0.1:${port}"]`,
        "",
      ].join("\n"),
    );
    const web = `127.0.0.1:${freePort()}`;
    prom = new Deno.Command("prometheus", {
      args: [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "tsdb")}`,
        `--web.listen-address=${web}`,
      ],
      stdout: "null",
      stderr: "piped",
      stdin: "null",
    }).spawn();
    promErr = drain(prom.stderr);
    const query = async (q: string) => {
      const res = await fetch(`http://${web}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = await res.json();
      const result = body?.data?.result as {
        metric: Record<string, string>;
        value: [number, string];
      }[];
      return result?.length ? result : undefined;
    };
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
    ok(await query("machined_apid_connections_total"), "apid's edge metrics are scraped");
  } finally {
    if (prom) {
      prom.kill("SIGTERM");
      await prom.status;
    }
    dev.kill("SIGTERM");
    await dev.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
