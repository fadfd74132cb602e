/**
 * What encrypting STATE and EPHEMERAL costs a boot (issue 29): one image
 * without a config, two CIDATA drives (the up config as it is, and the same
 * with both volumes LUKS2 by a `nodeid` key in slot 0 and a `static` key in
 * slot 1), each side provisioned once on its own copy of the image (the first
 * boot formats: its figures are printed as `boot: "first"`), then booted
 * alternately with a snapshot disk (plain, encrypted, plain, …), so every
 * measured boot is a later boot that opens what the first one made. Per boot:
 * QEMU start → first answer over mutual TLS and → both volumes ready
 * (host-measured), the guest's boot phases, machined's and the edge's PSS and
 * MemAvailable from the footprint line, and how each volume was opened (the
 * encrypted side must say `nodeid`, the plain side nothing, or the run fails).
 * The summary gives each figure's medians and its encrypted/plain ratio per pair.
 *
 * Run: `deno run -A bench/boot_encryption.ts [pairs]` (root for QEMU's files,
 * qemu-system-x86_64, OVMF; about 2 minutes a boot under TCG). One JSON object
 * per line, the summary last; all of them go to bench/results/boot_encryption.jsonl.
 *
 * @module
 */
import { join } from "node:path";
import { parse, stringify } from "yaml";
import {
  bootMemory,
  bootPhases,
  buildImage,
  ensureNodeBundle,
  FOOTPRINT,
  startVm,
  waitForApi,
} from "../imager/mod.ts";
import { machinectl, type ResourceDoc, waitForDocs, writeCidataVolume } from "../e2e/mod.ts";
import { freePort } from "../dev/testing.ts";
import { summarizeFigurePairs } from "./boot_pair.ts";

/** The board every boot claims: the encrypted side's `nodeid` keys derive from it. */
const BOARD = "5e7a0029-29a1-4c3e-9d00-000000029029";
const PASSPHRASE = "boot-encryption bench recovery passphrase";
const MiB = 1024;

/** The two sides: plain volumes, and both volumes LUKS2. */
export type Side = "plain" | "encrypted";

/** `upConfig` with STATE and EPHEMERAL LUKS2 by `nodeid` (slot 0) and `static` (slot 1). Pure. */
export function encryptedConfig(upConfig: string): string {
  const doc = parse(upConfig);
  const keys = [{ slot: 0, kind: "nodeid" }, { slot: 1, kind: "static", passphrase: PASSPHRASE }];
  doc.machine.install ??= {};
  doc.machine.install.encryption = { state: { keys }, ephemeral: { keys } };
  return stringify(doc);
}

/**
 * The way each ready volume was opened, checked against the side: the
 * encrypted side's two volumes by `nodeid` on a later boot (the first boot
 * formats, so it opened nothing it could name), the plain side's not at all.
 * @throws Error naming the volume that does not match. Pure.
 */
export function checkUnlocks(side: Side, later: boolean, volumes: readonly ResourceDoc[]): string {
  const how = volumes.map((v) => {
    const by = v.spec.unlockedBy as { kind?: string } | undefined;
    const encrypted = v.spec.encrypted === true;
    if (encrypted !== (side === "encrypted")) {
      throw new Error(`${v.metadata.id}: encrypted=${encrypted} on the ${side} side`);
    }
    if (side === "encrypted" && later && by?.kind !== "nodeid") {
      throw new Error(`${v.metadata.id} was not opened by its nodeid key: ${JSON.stringify(by)}`);
    }
    return `${v.metadata.id}:${by?.kind ?? "-"}`;
  });
  return how.sort().join(",");
}

interface Node {
  readonly clientConfig: string;
  readonly port: number;
}

/** Boots `image` once, measures it, stops it (gracefully after the first boot, so STATE is synced). */
async function bootOnce(
  node: Node,
  o: { side: Side; image: string; cidata: string; runDir: string; first: boolean },
): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const s = () => +((performance.now() - t0) / 1000).toFixed(1);
  const vm = await startVm({
    image: o.image,
    runDir: o.runDir,
    hostPort: node.port,
    accel: "auto",
    snapshot: !o.first,
    extraDisks: [o.cidata],
    uuid: BOARD,
  });
  try {
    await waitForApi(node.clientConfig, node.port, 600_000);
    const apiS = s();
    const ready = (d: ResourceDoc[]) => d.filter((v) => v.spec.phase === "ready");
    const volumes = ready(
      await waitForDocs(
        node.clientConfig,
        node.port,
        ["volumestatus"],
        (d) => ready(d).length === 2,
        600_000,
        500,
      ),
    );
    const volumesS = s();
    const foot = await vm.waitForConsole(FOOTPRINT, { timeoutMs: 300_000 });
    const kib = (i: number) => +(Number(foot[i]) / MiB).toFixed(1);
    const figures = {
      side: o.side,
      boot: o.first ? "first" : "later",
      opened: checkUnlocks(o.side, !o.first, volumes),
      qemuStartToApiAnswerS: apiS,
      qemuStartToVolumesReadyS: volumesS,
      memAvailableMiB: kib(1),
      machinedPssMiB: kib(2),
      apidPssMiB: kib(3),
      ...bootPhases(await vm.console()),
      ...bootMemory(foot),
    };
    if (o.first) {
      const r = await machinectl(
        node.clientConfig,
        node.port,
        "shutdown",
        "--wait",
        "--timeout",
        "4m",
      );
      if (r.code !== 0) throw new Error(`shutdown after the first boot: ${r.err}`);
    }
    return figures;
  } finally {
    await vm.stop({ gracefulMs: o.first ? 120_000 : 0 });
  }
}

async function record(line: Record<string, unknown>): Promise<void> {
  console.log(JSON.stringify(line));
  await Deno.mkdir("bench/results", { recursive: true });
  await Deno.writeTextFile("bench/results/boot_encryption.jsonl", JSON.stringify(line) + "\n", {
    append: true,
  });
}

if (import.meta.main) {
  const pairs = Number(Deno.args[0] ?? 3);
  const work = "build/bench/boot-encryption";
  await Deno.remove(work, { recursive: true }).catch(() => {});
  await Deno.mkdir(work, { recursive: true });
  const port = freePort();
  const bundle = await ensureNodeBundle(join(work, "node"), { name: "boot-encryption", port });
  const node = { clientConfig: bundle.paths.clientConfig, port };
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    out: join(work, "node.img"),
    quietConsole: true,
    force: true,
  });
  const upConfig = await Deno.readTextFile(bundle.paths.machineConfig);
  const sides = {} as Record<Side, { image: string; cidata: string }>;
  for (const side of ["plain", "encrypted"] as const) {
    const cidata = join(work, `${side}-cidata.img`);
    await writeCidataVolume(cidata, side === "plain" ? upConfig : encryptedConfig(upConfig));
    const copy = join(work, `${side}.img`);
    const cp = await new Deno.Command("cp", { args: ["--sparse=always", image.out, copy] })
      .output();
    if (!cp.success) throw new Error(`cp ${image.out} ${copy} failed`);
    sides[side] = { image: copy, cidata };
    await record(
      await bootOnce(node, { side, ...sides[side], runDir: join(work, side), first: true }),
    );
  }
  const runs: { a: Record<string, unknown>; b: Record<string, unknown> }[] = [];
  for (let i = 0; i < pairs; i++) {
    const boot = (side: Side) =>
      bootOnce(node, { side, ...sides[side], runDir: join(work, `${side}-${i}`), first: false });
    const a = await boot("plain");
    await record({ pair: i, ...a });
    const b = await boot("encrypted");
    await record({ pair: i, ...b });
    runs.push({ a, b });
  }
  await record({
    ...summarizeFigurePairs(runs),
    suite: "bootEncryption",
    bOverA: "encrypted/plain",
  });
}
