/**
 * What observing a node costs it: a dev-mode node sampled for a baseline
 * minute, then for OVERHEAD_MINUTES (default 10) with `machinectl dashboard`
 * running in a detached tmux session and a Prometheus scraping `GET /metrics`
 * every 15 s over mutual TLS. machined's and apid's VmRSS, Pss and CPU time
 * come from /proc every 30 s. Opt-in only: `deno task bench overhead`.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  promValue,
  startPrometheus,
  stopPrometheus,
  writeScrapeConfig,
} from "../api/client/mod.ts";
import type { Figure } from "./runtime_bench.ts";
import { drain, freePort, waitFor } from "../dev/testing.ts";
import { cpuMs, devApidPid, mib, procMem } from "./proc.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const INTERVAL_MS = 30_000;
const SESSION = "overhead";

/** One reading of a process: KiB and CPU seconds, at a monotonic time in ms. */
interface Sample {
  at: number;
  rssKiB: number;
  pssKiB: number;
  cpuS: number;
}

async function sample(pid: number): Promise<Sample> {
  const { rssKiB, pssKiB } = await procMem(pid);
  return { at: performance.now(), rssKiB, pssKiB, cpuS: cpuMs(pid) / 1000 };
}

/** Samples both processes every 30 s for `ms` (plus one reading at the start). */
async function samplePhase(pids: number[], ms: number): Promise<Sample[][]> {
  const out: Sample[][] = pids.map(() => []);
  const end = performance.now() + ms;
  while (true) {
    const got = await Promise.all(pids.map(sample));
    got.forEach((s, i) => out[i].push(s));
    const left = end - performance.now();
    if (left <= 1000) return out;
    await new Promise((r) => setTimeout(r, Math.min(INTERVAL_MS, left)));
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** CPU% of one core over each interval between samples. */
function cpuPercents(s: Sample[]): number[] {
  return s.slice(1).map((x, i) => (100 * (x.cpuS - s[i].cpuS)) / ((x.at - s[i].at) / 1000));
}

/** Least-squares RSS slope in MiB per hour over the samples after the first minute. */
function rssSlope(s: Sample[]): number {
  const t0 = s[0].at;
  const pts = s.filter((x) => x.at - t0 >= 60_000);
  if (pts.length < 2) return NaN;
  const xs = pts.map((p) => (p.at - t0) / 3_600_000);
  const ys = pts.map((p) => p.rssKiB / 1024);
  const mx = mean(xs), my = mean(ys);
  const num = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0);
  const den = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  return +(num / den).toFixed(2);
}

function figures(proc: string, base: Sample[], obs: Sample[]): Figure[] {
  const baseCpu = (100 * (base.at(-1)!.cpuS - base[0].cpuS)) /
    ((base.at(-1)!.at - base[0].at) / 1000);
  const cpu = cpuPercents(obs);
  const rss = obs.map((s) => s.rssKiB), pss = obs.map((s) => s.pssKiB);
  const r2 = (n: number) => +n.toFixed(2);
  return [
    {
      name: `overhead.${proc}.rss.baseline`,
      value: mib(mean(base.map((s) => s.rssKiB))),
      unit: "MiB",
    },
    {
      name: `overhead.${proc}.pss.baseline`,
      value: mib(mean(base.map((s) => s.pssKiB))),
      unit: "MiB",
    },
    { name: `overhead.${proc}.cpu.baseline`, value: r2(baseCpu), unit: "%" },
    {
      name: `overhead.${proc}.rss.observed`,
      value: mib(mean(rss)),
      unit: "MiB",
      max: mib(Math.max(...rss)),
    },
    {
      name: `overhead.${proc}.pss.observed`,
      value: mib(mean(pss)),
      unit: "MiB",
      max: mib(Math.max(...pss)),
    },
    {
      name: `overhead.${proc}.cpu.observed`,
      value: r2(mean(cpu)),
      unit: "%",
      max: r2(Math.max(...cpu)),
    },
    { name: `overhead.${proc}.rss.slope`, value: rssSlope(obs), unit: "MiB/h" },
  ];
}

async function tmux(socket: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("tmux", { args: ["-S", socket, ...args] }).output();
  if (!out.success) throw new Error(`tmux ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** The whole run; every process it starts is stopped in `finally`, by pid or session name. */
export async function observerOverhead(): Promise<Figure[]> {
  const minutes = Number(Deno.env.get("OVERHEAD_MINUTES") ?? "10");
  const dir = await Deno.makeTempDir({ prefix: "machined-overhead-" });
  const stateDir = join(dir, "state");
  const socket = join(dir, "tmux.sock");
  // A fixed port: the admin config dev mode writes (used by the dashboard) names it.
  const listen = `127.0.0.1:${freePort()}`;
  const dev = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "dev",
      "--state",
      stateDir,
      "--listen",
      listen,
    ],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const devOut = drain(dev.stdout);
  drain(dev.stderr);
  let prom: Deno.ChildProcess | undefined;
  let tmuxStarted = false;
  try {
    const port = await waitFor("dev mode's API", 120_000, () => {
      const m = /API on 127\.0\.0\.1:(\d+)/.exec(devOut.text);
      return Promise.resolve(m ? Number(m[1]) : undefined);
    });
    const apid = await waitFor("apid", 30_000, () => devApidPid(dev.pid));
    const pids = [dev.pid, apid];
    await new Promise((r) => setTimeout(r, 10_000)); // let start-up settle
    const base = await samplePhase(pids, 60_000);

    const promConfig = await writeScrapeConfig({
      dir,
      stateDir,
      port,
      intervalS: 15,
      timeoutS: 10,
    });
    const web = `127.0.0.1:${freePort()}`;
    const promStart = performance.now();
    prom = startPrometheus(promConfig, dir, web);
    const dash = `${Deno.execPath()} run -A ${join(ROOT, "machinectl/main.ts")} --config ` +
      `${join(stateDir, "machinectl.yaml")} dashboard; exec sleep 3600`;
    await tmux(socket, "new-session", "-d", "-s", SESSION, "-x", "120", "-y", "40", dash);
    tmuxStarted = true;
    let screen = "";
    await waitFor("the dashboard", 90_000, async () => {
      screen = await tmux(socket, "capture-pane", "-p", "-t", SESSION);
      return /^stage running/m.test(screen) ? true : undefined;
    }).catch((e) => {
      throw new Error(`${e.message}; screen:\n${screen}`);
    });
    const obs = await samplePhase(pids, minutes * 60_000);
    // Every scrape since Prometheus started (its first one lands up to 15 s in).
    const secs = Math.ceil((performance.now() - promStart) / 1000) + 5;
    const ok = await promValue(web, `sum_over_time(up{job="machined"}[${secs}s])`);
    const all = await promValue(web, `count_over_time(up{job="machined"}[${secs}s])`);
    return [
      ...figures("machined", base[0], obs[0]),
      ...figures("apid", base[1], obs[1]),
      { name: "overhead.scrapes.ok", value: ok ?? 0, unit: "scrapes", of: all ?? 0, minutes },
    ];
  } finally {
    if (tmuxStarted) await tmux(socket, "kill-session", "-t", SESSION).catch(() => "");
    await stopPrometheus(prom);
    dev.kill("SIGTERM");
    await dev.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
