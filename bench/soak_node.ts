/**
 * The soak's processes (bench/soak.ts): the dev-mode node and its apid
 * (machined-edge), the config each apply sends, and the host's load.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MACHINED_V8_FLAGS, v8FlagsArgs } from "../layout/mod.ts";
import { drain, waitFor } from "../dev/testing.ts";
import { devApidPid } from "./proc.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The sysctl whose value each apply changes (dev mode's sysctl backend is a fake). */
export const KNOB = "vm.swappiness";

/**
 * What each apply changes: `sysctl` sets {@link KNOB} to the apply's sequence
 * number; `hostname` also renames the node (`soak-<seq>`), as issue 25's soak
 * did, which wakes the hostname and resolver controllers as well.
 */
export type SoakChange = "sysctl" | "hostname";

/** The dev config with {@link KNOB} set to `seq` (and, for `hostname`, the node renamed). */
export function configWithSeq(base: string, seq: number, change: SoakChange = "sysctl"): string {
  const line = /^ {2}sysctls: .*$/m;
  if (!line.test(base)) throw new Error("the dev config has no one-line `sysctls:` to replace");
  const out = base.replace(line, `  sysctls:\n    ${KNOB}: "${seq}"`);
  if (change === "sysctl") return out;
  const host = /^ {2}hostname: .*$/m;
  if (!host.test(out)) throw new Error("the dev config has no `hostname:` to replace");
  return out.replace(host, `  hostname: soak-${seq}`);
}

/** The 1-minute load average: the machine is shared, the figures say how busy it was. */
export async function loadAverage(): Promise<number> {
  return Number((await Deno.readTextFile("/proc/loadavg")).split(" ")[0]);
}

/** What a bench may change in the dev node's process (to measure it, never in production). */
export interface DevNodeOptions {
  /** Extra environment, e.g. `MALLOC_ARENA_MAX`. */
  readonly env?: Readonly<Record<string, string>>;
  /** machined's V8 flags. @default MACHINED_V8_FLAGS */
  readonly v8Flags?: readonly string[];
}

/** The dev node on `port`, up (its banner printed), and its apid's pid. */
export async function startDevNode(stateDir: string, port: number, o: DevNodeOptions = {}) {
  const dev = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...v8FlagsArgs(o.v8Flags ?? MACHINED_V8_FLAGS), join(ROOT, "main.ts")]
      .concat(["dev", "--state", stateDir, "--listen", `127.0.0.1:${port}`]),
    env: { NO_COLOR: "1", ...o.env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const out = drain(dev.stdout);
  const err = drain(dev.stderr);
  try {
    await waitFor("dev node up", 120_000, () => {
      if (out.text.includes("is up")) return Promise.resolve(true);
      return Promise.resolve(undefined);
    });
  } catch (e) {
    dev.kill("SIGTERM");
    throw new Error(`${(e as Error).message}\n${out.text}\n${err.text}`);
  }
  return { dev, apid: await devApidPid(dev.pid), err };
}
