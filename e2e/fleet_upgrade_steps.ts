/**
 * The rolling upgrade of issue 31 on the fleet test's VMs, through the
 * playbook an operator runs (docs/playbooks/rolling_upgrade.yml: `serial: 1`,
 * `max_fail_percentage: 0`, machined.fleet.machined_upgrade):
 *   - a bundle whose kernel panics (`rdinit=/nonexistent`): the first node
 *     takes it, its one boot try (`machine.upgrade.boot_tries: 1`) fails and
 *     the loader boots its old slot again by itself; the module fails the
 *     host with the node's reason, the play stops there, and the other nodes
 *     are never upgraded and answer `version` throughout (polled while the
 *     first one upgrades);
 *   - (long tier) a good bundle rolled over every node, at most one node
 *     away at any time, timed.
 * The bundles are built before the VMs boot (fleetBundles), off their path.
 */
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildImage, bundleCompatible, type ImageResult, writeImageBundle } from "../imager/mod.ts";
import { loadSigningKey, writeBundle } from "../bundle/mod.ts";
import { machinectlNs, parseDocs } from "./helpers.ts";
import { type GetDoc, pollGet } from "./poll_get.ts";
import { type FleetContext, recaps, type RunPlaybook } from "./fleet_ansible_steps.ts";
import { LONG_TIER, LONG_TIER_ONLY } from "./tiers.ts";

const PLAYBOOK = fileURLToPath(new URL("../docs/playbooks/rolling_upgrade.yml", import.meta.url));
/** The version the fleet's image carries (ordered, so a bundle above it is an upgrade). */
export const FLEET_VERSION = "1.0.0-fleet";
const BROKEN = "2.0.0-broken";
const GOOD = "2.0.0-fleet";
const secs = (t0: number) => +((performance.now() - t0) / 1000).toFixed(1);

/** A bundle file and the version it carries. */
export interface Bundle {
  path: string;
  version: string;
}

/**
 * The panicking bundle (the fleet image's own slot files, its command line's
 * `rdinit=` pointing nowhere) and, in the long tier, a good one (the same
 * program rebuilt as version 2.0.0-fleet), signed by `keyPem`.
 */
export async function fleetBundles(o: {
  work: string;
  image: ImageResult;
  program: string;
  keyPem: string;
}): Promise<{ broken: Bundle; good?: Bundle }> {
  const key = await loadSigningKey(o.keyPem);
  const cmdline = o.image.cmdline.replace(/rdinit=\S+/, "rdinit=/nonexistent");
  assert.notEqual(cmdline, o.image.cmdline, "the image's command line names its rdinit");
  const broken = { path: resolve(o.work, "broken.bundle"), version: BROKEN };
  await writeBundle(broken.path, {
    files: {
      "vmlinuz": o.image.kernelPath,
      "initramfs.img": o.image.initramfsPath,
      "root.img": o.image.rootImagePath,
    },
    version: BROKEN,
    cmdline,
    compatible: bundleCompatible(o.image.arch),
    key,
  });
  if (!LONG_TIER) return { broken };
  const t0 = performance.now();
  const v2 = await buildImage({
    program: o.program,
    out: join(o.work, "v2.img"),
    quietConsole: true,
    imageVersion: GOOD,
  });
  const keyFile = join(o.work, "signing-key.pem");
  await Deno.writeTextFile(keyFile, o.keyPem);
  const good = { path: resolve(o.work, "good.bundle"), version: GOOD };
  await writeImageBundle(v2, good.path, keyFile);
  console.log(`the good bundle (${GOOD}) built in ${secs(t0)} s`);
  return { broken, good };
}

/** `image V, slot S` of each node that answers `version`, else undefined. */
async function versions(c: FleetContext): Promise<(string | undefined)[]> {
  return await Promise.all(c.nodes.map(async (n) => {
    const r = await machinectlNs(c.ns, "--config", c.clientConfig, "-e", n.address, "version");
    return r.code === 0 ? r.out.match(/image (\S+, slot \S+)/)?.[1] : undefined;
  }));
}

/**
 * Runs the rolling-upgrade playbook with `bundle` while polling every node's
 * `version` in rounds; returns the play's result, the rounds and the time.
 */
async function rollWhilePolling(c: FleetContext, run: RunPlaybook, bundle: Bundle) {
  const t0 = performance.now();
  let done = false;
  const play = run(PLAYBOOK, "-e", `bundle=${bundle.path}`, "-e", `version=${bundle.version}`)
    .finally(() => done = true);
  const rounds: (string | undefined)[][] = [];
  const at: number[] = [];
  while (!done) {
    at.push(secs(t0));
    rounds.push(await versions(c));
    await new Promise((r) => setTimeout(r, 2000));
  }
  const r = await play;
  // When each node was first seen away and first seen back (seconds into the play).
  const away = c.nodes.map((_, i) => {
    const gone = rounds.findIndex((round) => round[i] === undefined);
    if (gone < 0) return "never away";
    const back = rounds.findIndex((round, j) => j > gone && round[i] !== undefined);
    return `away ${at[gone]} s` + (back < 0 ? "" : `, back ${at[back]} s`);
  });
  console.log(c.nodes.map((n, i) => `${n.name}: ${away[i]}`).join("; "));
  return { ...r, rounds, seconds: secs(t0) };
}

/** What the steps read of an UpgradeStatus spec. */
type UpgradeStatusDoc = {
  booted: string;
  slots: { slot: string; state: string }[];
  last: { outcome: string; reason: string };
};

/** The node's UpgradeStatus spec (`machinectl get upgradestatus -o json`). */
async function upgradeStatus(c: FleetContext, address: string) {
  const r = await machinectlNs(
    c.ns,
    "--config",
    c.clientConfig,
    "-e",
    address,
    "get",
    "upgradestatus",
    "-o",
    "json",
  );
  assert.equal(r.code, 0, r.out + r.err);
  return parseDocs(r.out)[0].spec as UpgradeStatusDoc;
}

/** The node's UpgradeStatus once it has read STATE's record (`last` not `unknown`), within 60 s. */
async function knownUpgradeStatus(c: FleetContext, address: string) {
  const target = { ns: c.ns, clientConfig: c.clientConfig, api: address };
  const known = (d: GetDoc) => (d.spec as UpgradeStatusDoc).last.outcome !== "unknown";
  return (await pollGet(target, "upgradestatus", known, 60_000)).spec as UpgradeStatusDoc;
}

/** The broken bundle's play, then (long tier) the good one's. */
export async function fleetUpgradeSteps(
  c: FleetContext & { run: RunPlaybook; bundles: { broken: Bundle; good?: Bundle } },
): Promise<void> {
  const { t, nodes } = c;
  const [first, ...rest] = nodes;
  const old = `${FLEET_VERSION}, slot A`;
  await t.step(
    "ansible rolling upgrade (serial 1) with a panicking bundle: the first node falls back " +
      "by itself, the play stops there, the others untouched and answering throughout",
    async () => {
      const before = await Promise.all(rest.map((n) => knownUpgradeStatus(c, n.address)));
      for (const o of before) assert.equal(o.last.outcome, "none", JSON.stringify(o));
      const r = await rollWhilePolling(c, c.run, c.bundles.broken);
      console.log(
        `rolling upgrade stopped by a broken bundle: ${r.seconds} s, ${r.rounds.length} ` +
          `polls of ${nodes.length} nodes`,
      );
      assert.notEqual(r.code, 0, r.text);
      const rc = recaps(r.text);
      assert.equal(rc[first.name]?.failed, 1, r.text);
      assert.match(
        r.text,
        new RegExp(
          `came back on slot A version ${FLEET_VERSION}, not slot B version ${BROKEN}: ` +
            "rolled back \\(UPGRADE_OUTCOME_ROLLED_BACK: slot B used its boot tries",
        ),
      );
      assert.match(r.text, /"code": "rolled_back"/);
      for (const n of rest) {
        assert.equal(rc[n.name]?.changed ?? 0, 0, `${n.name} was not upgraded\n${r.text}`);
        assert.ok(!r.text.includes(`[${n.name}]`), `${n.name} ran no task\n${r.text}`);
      }
      // The others answered every poll, on the old version.
      assert.ok(r.rounds.length >= 10, `polled throughout (${r.rounds.length} rounds)`);
      for (const [i, n] of nodes.entries()) {
        if (i === 0) continue;
        const missed = r.rounds.filter((round) => round[i] !== old).length;
        assert.equal(
          missed,
          0,
          `${n.name} answered ${old} at every poll: ${JSON.stringify(r.rounds)}`,
        );
      }
      assert.ok(r.rounds.some((round) => round[0] === undefined), "the first node went away");
      assert.deepEqual(await versions(c), nodes.map(() => old));
      const s = await upgradeStatus(c, first.address);
      assert.equal(s.booted, "A", JSON.stringify(s));
      assert.equal(s.slots.find((x) => x.slot === "B")?.state, "bad", JSON.stringify(s));
      assert.equal(s.last.outcome, "rolled-back", JSON.stringify(s));
      assert.match(s.last.reason, /slot B used its boot tries/);
      // The others' slots and last outcome as they were: never sent a bundle.
      const after = await Promise.all(rest.map((n) => upgradeStatus(c, n.address)));
      assert.deepEqual(after, before);
    },
  );
  const good = c.bundles.good;
  await t.step({
    name: `ansible rolling upgrade (serial 1) of all ${nodes.length} nodes with a good bundle, ` +
      "at most one away at a time" + (good ? "" : ` (${LONG_TIER_ONLY})`),
    ignore: !good,
    fn: async () => {
      const r = await rollWhilePolling(c, c.run, good!);
      console.log(`rolling upgrade of ${nodes.length} nodes: ${r.seconds} s`);
      assert.equal(r.code, 0, r.text);
      const rc = recaps(r.text);
      for (const n of nodes) assert.equal(rc[n.name]?.changed, 1, r.text);
      const away = Math.max(...r.rounds.map((round) => round.filter((v) => !v).length));
      assert.ok(away <= 1, `at most one node away at a time: ${JSON.stringify(r.rounds)}`);
      assert.deepEqual(await versions(c), nodes.map(() => `${GOOD}, slot B`));
    },
  });
}
