/**
 * The node of e2e/node_reset_test.ts and the case's helpers: an image without
 * a config, whose config (the up config, two extra services, STATE encrypted
 * with `nodeid` slot 0 and `static` slot 1, a canary as a comment) comes from
 * a CIDATA drive and then lives only on the encrypted STATE; booted with a
 * data disk as board A, and again over the same disks as another board.
 * @module
 */
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { buildImage, startVm, waitForApi } from "../imager/mod.ts";
import { writeCidataVolume } from "./cidata.ts";

/** Two boards: STATE's nodeid key is derived from the first. */
export const BOARD_A = "5e7a0001-29a1-4c3e-9d00-00000000a001";
export const BOARD_B = "5e7a0002-29a1-4c3e-9d00-00000000b002";
/** STATE's static key (slot 1): the recovery passphrase typed on board B. */
export const PASSPHRASE = "reset-test recovery passphrase 29";

const MARKER_SCRIPT = [
  `const d = "/var/reset-markers"; Deno.mkdirSync(d, { recursive: true });`,
  `const id = Deno.readTextFileSync("/proc/sys/kernel/random/boot_id").trim();`,
  `const old = [...Deno.readDirSync(d)].map((e) => e.name).sort();`,
  `console.log("markers: " + (old.join(",") || "none") + " boot " + id);`,
  `Deno.writeTextFileSync(d + "/" + id, "x\\n"); setInterval(() => {}, 1e9);`,
].join(" ");
const CRASHY_SCRIPT =
  `Deno.addSignalListener("SIGTERM", () => console.log("crashy: ignoring SIGTERM"));` +
  ` setTimeout(() => Deno.exit(3), 2000);`;

/**
 * The up config plus `crashy` (ignores SIGTERM, exits after 2 s, restarts: a
 * crash loop) and `marker` (logs which boots left a marker in /var/reset-markers,
 * then writes its own boot's), with STATE encrypted and `canary` as a comment.
 */
export function resetConfig(upConfig: string, canary: string): string {
  const doc = parse(upConfig);
  const env = { DENO_DIR: "/var/cache/deno", NO_COLOR: "1" };
  doc.machine.services.push(
    {
      id: "crashy",
      command: ["/usr/bin/deno", "eval", CRASHY_SCRIPT],
      env,
      restart: "always",
      stop_grace_period: "5s",
    },
    { id: "marker", command: ["/usr/bin/deno", "eval", MARKER_SCRIPT], env, restart: "always" },
  );
  doc.machine.install.encryption = {
    state: {
      keys: [{ slot: 0, kind: "nodeid" }, { slot: 1, kind: "static", passphrase: PASSPHRASE }],
    },
  };
  return `# ${canary}\n${stringify(doc)}`;
}

/**
 * Builds the image without a config and a CIDATA drive holding `configText`,
 * boots them with the data disk as board A and resolves once the API answers
 * with mutual TLS. `boot(run, uuid)` starts the same disks again as another board.
 */
export async function startResetNode(o: {
  work: string;
  port: number;
  clientConfig: string;
  configText: string;
  dataDisk: string;
}) {
  const cidata = join(o.work, "cidata.img");
  await writeCidataVolume(cidata, o.configText);
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    out: join(o.work, "node.img"),
    quietConsole: true,
    force: true,
  });
  const boot = (run: string, uuid: string) =>
    startVm({
      image: image.out,
      runDir: join(o.work, run),
      hostPort: o.port,
      accel: "auto",
      snapshot: false,
      extraDisks: [o.dataDisk, cidata],
      uuid,
    });
  const t0 = performance.now();
  const vm = await boot("qemu", BOARD_A);
  try {
    await waitForApi(o.clientConfig, o.port, 400_000);
  } catch (e) {
    await vm.stop({ gracefulMs: 0 }).catch(() => {});
    throw e;
  }
  return { vm, image, boot, apiS: +((performance.now() - t0) / 1000).toFixed(1) };
}

/** Calls `fn` every second until it returns a value (errors retried) or `timeoutMs` passes. */
export async function poll<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 400_000) {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  while (performance.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`timed out waiting for ${what}: ${String(last ?? "")}`);
}

/** Seconds since `t0` (a `performance.now()`), to one decimal. */
export function secondsSince(t0: number): number {
  return +((performance.now() - t0) / 1000).toFixed(1);
}
