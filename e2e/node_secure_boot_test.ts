/**
 * Secure Boot with the owner's keys, in QEMU (issue 28): OVMF's Secure Boot
 * firmware (SMM, a secure pflash) with empty variables, so it starts in Setup
 * Mode; an image built with `--secure-boot-keys` (a signed systemd-boot, a
 * signed UKI per slot, the owner's PK/KEK/db .auth files). One VM:
 *
 * 1. first boot: systemd-boot enrolls the keys and resets; the node then
 *    boots its signed UKI with Secure Boot on and the kernel locked down
 *    (integrity), takes its config from a CIDATA drive (the images carry
 *    none: it lives on STATE) and answers over mutual TLS;
 *    with PCR 11 as systemd-measure computes it for that UKI;
 * 2. a Secure Boot bundle of another version: another owner's UKIs and a
 *    plain bundle refused before the ESP changes, the signed one installed
 *    into B and booted (cold: a UKI entry is never kexec-staged), rollback
 *    to A (e2e/secure_boot_upgrade_step.ts);
 *    STATE (holding the config) and EPHEMERAL are LUKS2 with a `static` and
 *    a `tpm` key: sealed at the first boot under the UKI's signed PCR 11
 *    policy, opened by the TPM on B (a new UKI, its own signed policy; STATE
 *    by its header's token before any config), the headers never rewritten,
 *    PCR 11 closed with `sysinit` on each boot (e2e/tpm_volume_checks.ts);
 *    powered off, the host finds neither the config's canary nor a passphrase
 *    in the disk image and the `machined-tpm` and `machined-static` tokens in
 *    `cryptsetup luksDump`; then booted with a fresh TPM state: STATE locked,
 *    maintenance, STATE's bytes unchanged, `machinectl unlock STATE` opens it
 *    and the same boot goes on with its config (e2e/locked_state_unlock.ts);
 *    the static keys open both and the status says why the TPM did not;
 * 3. one byte of each UKI's command line changed on the disk (the
 *    variables kept): the firmware refuses to load it, and no kernel starts.
 *
 * Prints the figures as one JSON line (bench/results/secure_boot.json).
 */
import assert from "node:assert/strict";
import { createHash, X509Certificate } from "node:crypto";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import {
  buildImage,
  ensureNodeBundle,
  isRunning,
  onPath,
  startVm,
  UP_FAIL,
  UP_PAYLOAD_ID,
  type Vm,
  waitForApi,
} from "../imager/mod.ts";
import { generateSigningKey } from "../bundle/mod.ts";
import { secureBootUpgradeStep } from "./secure_boot_upgrade_step.ts";
import { generateSecureBootKeys, SECURE_BOOT_KEY_NAMES } from "../pki/mod.ts";
import type { SecureBootStatusSpec } from "../resources/mod.ts";
import { writeCidataVolume } from "./cidata.ts";
import { freePort, machinectl, parseDocs, waitForDocs } from "./helpers.ts";
import { checkAtRest, fileContains, luksDumpAt, partitionRange } from "./luks_host.ts";
import { unlockLockedState } from "./locked_state_unlock.ts";
import { expectedPcr11, flipUkiCmdlineByte, readUkiFromImage } from "./uki_on_esp.ts";
import { espFingerprint } from "./upgrade_helpers.ts";
import {
  checkStaticFallback,
  checkTpmEnrolled,
  checkTpmUnlocked,
  headerShas,
  TPM_ENCRYPTION,
  TPM_PASSPHRASES,
} from "./tpm_volume_checks.ts";

const WORK = "build/e2e/secure-boot";
const X = "1.0.0-e2e";
const Y = "2.0.0-e2e";
const hasTools = await Promise.all(
  ["qemu-system-x86_64", "sbsign", "sign-efi-sig-list", "mcopy", "swtpm"].map(onPath),
).then((ok) => ok.every(Boolean));
const hasFirmware = await Promise.all(
  ["/usr/share/OVMF/OVMF_CODE_4M.secboot.fd", "/lib/systemd/systemd-measure"].map((f) =>
    Deno.stat(f).then(() => true, () => false)
  ),
).then((ok) => ok.every(Boolean));

/** The node's own view (SecureBootStatus over mTLS): on, enrolled with exactly this owner's keys. */
async function checkSecureBootStatus(
  config: string,
  port: number,
  keys: Awaited<ReturnType<typeof generateSecureBootKeys>>,
): Promise<SecureBootStatusSpec> {
  const got = await machinectl(config, port, "get", "securebootstatus", "-o", "json");
  assert.equal(got.code, 0, got.err);
  const spec = parseDocs(got.out)[0].spec as unknown as SecureBootStatusSpec;
  assert.equal(spec.efi, true);
  assert.equal(spec.secureBoot, "on");
  assert.equal(spec.setupMode, "off");
  assert.equal(spec.lockdown, "integrity");
  for (const n of SECURE_BOOT_KEY_NAMES) {
    const der = new X509Certificate(keys[n].certPem).raw;
    const sha = createHash("sha256").update(der).digest("hex");
    const certs = spec[n === "db" ? "db" : n === "KEK" ? "kek" : "pk"].certificates;
    assert.deepEqual(certs.map((c) => c.sha256.replace(/^SHA256:/, "").toLowerCase()), [sha], n);
  }
  return spec;
}

/** Each boot's PCR 11 after machined closed it to tpm keys, from its console line. */
async function closedPcrs(vm: { console(): Promise<string> }): Promise<string[]> {
  for (let i = 0;; i++) {
    const log = await vm.console();
    const got = [...log.matchAll(/tpm: PCR 11 extended phase=sysinit pcr11=([0-9a-f]{64})/g)];
    const boots = (log.match(/machined-init: start /g) ?? []).length;
    if (got.length >= boots || i >= 30) return got.map((m) => m[1]);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The config in force came from STATE (the images carry none; CIDATA was the first boot's). */
async function checkConfigFromState(client: string, port: number): Promise<void> {
  const [cs] = await waitForDocs(client, port, ["configstatus"], (d) => d.length === 1);
  assert.equal(cs.spec.state, "valid");
  assert.match(String(cs.spec.source), /^STATE /, "the config was read from STATE");
}

/**
 * The powered-off disk as the host sees it: no canary from the config and no
 * passphrase in clear, both slots' tokens in each header (the CIDATA drive,
 * which holds the config in clear, proves the search finds one).
 */
async function checkDiskAtRest(image: string, cidata: string, canary: string) {
  assert.ok(await fileContains(cidata, new TextEncoder().encode(canary)), "the search works");
  const tokens = ["machined-static", "machined-tpm"];
  const state = await checkAtRest({
    image,
    scratch: WORK,
    volume: "STATE",
    secrets: {
      "the config's canary": canary,
      "STATE's passphrase": TPM_PASSPHRASES.STATE,
      "EPHEMERAL's passphrase": TPM_PASSPHRASES.EPHEMERAL,
    },
    tokens,
  });
  const eph = await luksDumpAt(image, (await partitionRange(image, "EPHEMERAL")).offset, WORK);
  assert.deepEqual(eph.tokens, tokens, "EPHEMERAL's tokens");
  return state;
}

/** The machine config (CIDATA's user-data): the up node's, trusting `signingPem`, both volumes encrypted. */
async function caseConfig(machineConfig: string, signingPem: string, canary: string) {
  const cfg = parse(await Deno.readTextFile(machineConfig));
  cfg.machine.upgrade = { trusted_keys: [signingPem] };
  cfg.machine.install.encryption = TPM_ENCRYPTION;
  // A value the node keeps in its config on STATE, looked for in the powered-off image.
  const payload = cfg.machine.services.find((s: { id: string }) => s.id === UP_PAYLOAD_ID);
  payload.env = { ...payload.env, E2E_CANARY: canary };
  return stringify(cfg);
}

Deno.test({
  name: "Secure Boot in QEMU: the image enrolls its owner's keys, boots its signed UKI locked " +
    "down, upgrades to a Secure Boot bundle and rolls back, refuses other owners' UKIs, and a UKI with one changed command-line byte is refused by the firmware " +
    "and PCR 11 is what systemd-measure computes; STATE (holding the config) and EPHEMERAL open by their tpm keys after the upgrade without a reseal, " +
    "nothing in clear at rest, and a fresh TPM leaves STATE locked until `machinectl unlock` (needs qemu-system-x86_64, OVMF, sbsigntool, efitools, swtpm)",
  ignore: !hasTools || !hasFirmware || Deno.build.arch !== "x86_64",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const tCase = performance.now();
  await Deno.remove(WORK, { recursive: true }).catch(() => {});
  const keyDir = join(WORK, "keys");
  await Deno.mkdir(keyDir, { recursive: true });
  const keys = await generateSecureBootKeys("e2e");
  for (const n of SECURE_BOOT_KEY_NAMES) {
    await Deno.writeTextFile(join(keyDir, `${n}.crt`), keys[n].certPem);
    await Deno.writeTextFile(join(keyDir, `${n}.key`), keys[n].keyPem, { mode: 0o600 });
  }
  const port = freePort();
  const runDir = join(WORK, "qemu");
  const name = "e2e-secure-boot";
  // A machine config that trusts our bundle signing key, on a CIDATA drive (then on STATE).
  const signing = await generateSigningKey();
  const signingKeyFile = join(WORK, "signing-key.pem");
  await Deno.writeTextFile(signingKeyFile, signing.privatePem, { mode: 0o600 });
  const bundle = await ensureNodeBundle(join(WORK, "node"), { name, port });
  const client = bundle.paths.clientConfig;
  const canary = `canary-${crypto.randomUUID()}`;
  const cidata = join(WORK, "cidata.img");
  await writeCidataVolume(
    cidata,
    await caseConfig(bundle.paths.machineConfig, signing.publicPem, canary),
  );
  const program = new URL("../main.ts", import.meta.url).pathname;
  const t0 = performance.now();
  const image = await buildImage({
    program,
    out: join(WORK, "sb.img"),
    imageVersion: X,
    secureBootKeys: keyDir,
  });
  // The same disks, the TPM directory; the first launch enrolls, later ones keep the variables.
  const boot = (keepVars: boolean) =>
    startVm({
      image: image.out,
      runDir,
      hostPort: port,
      accel: "auto",
      extraDisks: [cidata],
      secureBoot: { keepVars },
      tpm: true,
    });
  let vm: Vm = await boot(false);
  const figures: Record<string, unknown> = {
    suite: "secure-boot",
    at: new Date().toISOString(),
    accel: vm.state.accel,
  };
  try {
    await vm.waitForConsole(/machined: API ready/, { timeoutMs: 600_000, failOn: UP_FAIL });
    await waitForApi(client, port, 600_000);
    figures.enrollAndBootToApiS = +((performance.now() - t0) / 1000).toFixed(1);
    const log = await vm.console();
    // The guest's own clock from kernel start (the firmware's enrolment reset is before it).
    figures.apiReadyUptimeS = Number(/machined: API ready .*uptime_s=([\d.]+)/.exec(log)?.[1]);
    assert.match(log, /secureboot: Secure boot enabled/);
    assert.match(log, /Kernel is locked down from EFI Secure Boot/);
    assert.equal(
      (log.match(/Linux version /g) ?? []).length,
      1,
      "one kernel start after enrolling",
    );
    const v = await machinectl(client, port, "version");
    assert.equal(v.code, 0, v.err);
    assert.match(v.out, /slot A/);
    const status = await checkSecureBootStatus(client, port, keys);
    // Measured boot: the stub measured the UKI into PCR 11, machined-init its two phases.
    assert.match(log, /machined-init: measured phase=enter-initrd pcr=11/);
    assert.match(log, /machined-init: measured phase=leave-initrd pcr=11/);
    assert.equal(status.tpm, true);
    const espOffset = image.layout!.espOffset;
    const uki = await readUkiFromImage(image.out, espOffset, "/A/machined.efi");
    const want = await expectedPcr11(uki, "enter-initrd:leave-initrd");
    // Read at machined's start, or after it closed PCR 11 to tpm keys once EPHEMERAL was up.
    const closed = await expectedPcr11(uki, "enter-initrd:leave-initrd:sysinit");
    assert.ok(
      [want, closed].includes(status.pcrs.find((p) => p.index === 11)?.sha256 ?? ""),
      "PCR 11 as systemd-measure computes it",
    );
    figures.pcr11 = want;
    // The `tpm` keys: STATE and EPHEMERAL sealed at this first boot (the stub's policy reached
    // machined), checked while the upgrade's image builds (the step awaits it first).
    assert.match(log, /machined-init: carried tpm2-pcr-signature\.json, tpm2-pcr-public-key\.pem/);
    const t = performance.now();
    const enrolled = (async () => {
      await checkTpmEnrolled(client, port);
      figures.tpmEnrolledAfterApiS = +((performance.now() - t) / 1000).toFixed(1);
      // Then machined closed PCR 11 to tpm keys (sysinit), to the value a host predicts.
      assert.deepEqual(await closedPcrs(vm), [closed]);
      return await headerShas(image.out);
    })();
    enrolled.catch(() => {}); // awaited below; a failure is thrown there

    // 2. A Secure Boot bundle: refusals (another owner's UKIs, a plain bundle), B at Y, back to A.
    Object.assign(
      figures,
      await secureBootUpgradeStep({
        client,
        port,
        work: WORK,
        program,
        keyDir,
        signingKeyFile,
        esp: () => espFingerprint(image.out, espOffset),
        afterBuild: async () => void await enrolled,
        // On B (a new UKI, its own signed policy): STATE (its config) and EPHEMERAL opened by
        // the TPM, the headers as sealed.
        onB: async () => {
          const t = performance.now();
          await checkTpmUnlocked(client, port);
          figures.tpmUnlockedOnBWaitS = +((performance.now() - t) / 1000).toFixed(1);
          await checkConfigFromState(client, port);
          assert.deepEqual(await headerShas(image.out), await enrolled, "no reseal");
          const ukiB = await readUkiFromImage(image.out, espOffset, "/B/machined.efi");
          const closedB = await expectedPcr11(ukiB, "enter-initrd:leave-initrd:sysinit");
          assert.deepEqual(await closedPcrs(vm), [closed, closedB], "A, then B");
        },
      }, { x: X, y: Y }),
    );
    // Powered off by the node (volumes closed, the guest flushed): nothing in clear at rest,
    // the tokens in the headers.
    const tOff = performance.now();
    const off = await machinectl(client, port, "shutdown", "--wait", "--timeout", "4m");
    assert.equal(off.code, 0, off.out + off.err);
    for (let i = 0; await isRunning(vm.state.pid); i++) {
      assert.ok(i < 120, "QEMU exits after the power-off");
      await new Promise((r) => setTimeout(r, 1000));
    }
    figures.powerOffS = +((performance.now() - tOff) / 1000).toFixed(1);
    const tChecks = performance.now();
    const state = await checkDiskAtRest(image.out, cidata, canary);
    figures.hostChecksS = +((performance.now() - tChecks) / 1000).toFixed(1);

    // 2b. A fresh TPM (swtpm's state removed: a cleared TPM, a board swap): the sealed keys
    // cannot be unsealed. STATE's passphrase is in the config on STATE: the node waits in
    // maintenance, `locked`, until an operator types it; then the same boot goes on with its
    // config, the static keys open both volumes and the status says why the TPM did not.
    await Deno.remove(join(runDir, "tpm"), { recursive: true });
    const tFresh = performance.now();
    vm = await boot(true);
    const unlockedAt = await unlockLockedState({
      vm,
      port,
      image: image.out,
      state,
      passphrase: TPM_PASSPHRASES.STATE,
      slot: 0,
      reason: /^STATE is locked: tried slot 1 \(tpm\): .+; slot 0 \(static\) need a passphrase/s,
      figures,
      bootedAt: tFresh,
    });
    await waitForApi(client, port, 400_000);
    figures.unlockToApiS = +((performance.now() - unlockedAt) / 1000).toFixed(1);
    await checkConfigFromState(client, port);
    await checkStaticFallback(client, port, "STATE");
    await checkStaticFallback(client, port, "EPHEMERAL");
    figures.freshTpmStaticOpenS = +((performance.now() - tFresh) / 1000).toFixed(1);
    await vm.stop({ gracefulMs: 0 });

    // 3. Both UKIs with one byte of their signed command lines changed, the keys still enrolled.
    for (const slot of ["A", "B"]) {
      await flipUkiCmdlineByte(image.out, espOffset, `/${slot}/machined.efi`);
    }
    const t1 = performance.now();
    vm = await boot(true);
    const refused = await vm.waitForConsole(/Security Violation|Access Denied/i, {
      timeoutMs: 300_000,
      failOn: /Linux version /,
    });
    figures.tamperedRefusedS = +((performance.now() - t1) / 1000).toFixed(1);
    assert.ok(refused);
    assert.doesNotMatch(await vm.console(), /Linux version /);
  } finally {
    await vm.stop({ gracefulMs: 0 }).catch(() => {});
    figures.caseS = +((performance.now() - tCase) / 1000).toFixed(1);
    console.log(JSON.stringify(figures));
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile("bench/results/secure_boot.json", JSON.stringify(figures) + "\n");
  }
});
