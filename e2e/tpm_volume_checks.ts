/**
 * The `tpm` key kind on a real node, for the Secure Boot case (issue 29):
 * STATE (which holds the config) and EPHEMERAL are each configured LUKS2
 * with a `static` key in slot 0 and a `tpm` key in slot 1. On the first boot
 * the format seals slot 1 by the TPM (the signed UKI's `.pcrpkey`, carried
 * by machined-init); after every later boot (the upgrade to another signed
 * UKI, the rollback) VolumeStatus says the TPM opened both, STATE before
 * any config (its header's `machined-tpm` token), and the LUKS2 headers have
 * not changed (no reseal); with the TPM's state cleared, STATE's static key
 * comes from an operator (the config is on STATE: e2e/locked_state_unlock.ts),
 * EPHEMERAL's from the config, and the status says why the TPM did not.
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { waitForDocs } from "./helpers.ts";
import { partitionRange } from "./luks_host.ts";

/** STATE's and EPHEMERAL's recovery passphrases (never in clear on the disk). */
export const TPM_PASSPHRASES = {
  STATE: "e2e recovery passphrase for STATE",
  EPHEMERAL: "e2e recovery passphrase for EPHEMERAL",
} as const;

/** A volume of this module: both are configured alike. */
export type TpmVolume = keyof typeof TPM_PASSPHRASES;

const keys = (v: TpmVolume) => ({
  keys: [
    { slot: 0, kind: "static", passphrase: TPM_PASSPHRASES[v] },
    { slot: 1, kind: "tpm" },
  ],
});

/** The config's encryption: each volume by a static recovery key and a TPM-sealed key. */
export const TPM_ENCRYPTION = { state: keys("STATE"), ephemeral: keys("EPHEMERAL") };

type Vol = {
  phase: string;
  encrypted: boolean;
  unlockedBy: { slot: number; kind: string } | null;
  keySlots: { slot: number; kind: string; proven: boolean }[];
  keyNotes: string[];
};

/** A volume's VolumeStatus once it is ready (throws on failed or locked). */
export async function volumeReady(client: string, port: number, volume: TpmVolume): Promise<Vol> {
  const [doc] = await waitForDocs(client, port, ["volumestatus", volume], (d) => {
    const s = d[0]?.spec as Vol | undefined;
    if (s?.phase === "failed" || s?.phase === "locked") {
      throw new Error(`${volume} ${s.phase}: ${JSON.stringify(s)}`);
    }
    return s?.phase === "ready";
  }, 240_000);
  return doc.spec as unknown as Vol;
}

/** First boot: each volume formatted with both slots, the TPM's sealed without a note. */
export async function checkTpmEnrolled(client: string, port: number): Promise<void> {
  for (const v of ["STATE", "EPHEMERAL"] as const) {
    const s = await volumeReady(client, port, v);
    assert.equal(s.encrypted, true, JSON.stringify(s));
    assert.deepEqual(s.keySlots.map((k) => [k.slot, k.kind]), [[0, "static"], [1, "tpm"]], v);
    assert.deepEqual(s.keyNotes, [], `${v}: no tpm slot skipped`);
  }
}

/** A later boot: the TPM opened both volumes, and no other key was needed. */
export async function checkTpmUnlocked(client: string, port: number): Promise<void> {
  for (const v of ["STATE", "EPHEMERAL"] as const) {
    const s = await volumeReady(client, port, v);
    assert.deepEqual(s.unlockedBy, { slot: 1, kind: "tpm" }, `${v}: ${JSON.stringify(s)}`);
    assert.deepEqual(s.keyNotes, [], v);
  }
}

/**
 * A boot with a fresh TPM (its state cleared, as after a TPM clear or a board
 * swap): the sealed key cannot be unsealed, the static key opens the volume,
 * and the status says why the TPM did not.
 */
export async function checkStaticFallback(
  client: string,
  port: number,
  volume: TpmVolume,
): Promise<Vol> {
  const s = await volumeReady(client, port, volume);
  assert.deepEqual(s.unlockedBy, { slot: 0, kind: "static" }, JSON.stringify(s));
  assert.ok(s.keyNotes.some((n) => n.startsWith("slot 1 (tpm): ")), JSON.stringify(s.keyNotes));
  return s;
}

/** SHA-256 of both volumes' LUKS2 header areas (16 MiB each) as the disk image holds them. */
export async function headerShas(image: string): Promise<Record<TpmVolume, string>> {
  return { STATE: await headerSha(image, "STATE"), EPHEMERAL: await headerSha(image, "EPHEMERAL") };
}

async function headerSha(image: string, volume: TpmVolume): Promise<string> {
  const { offset } = await partitionRange(image, volume);
  using f = await Deno.open(image, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const b = new Uint8Array(16 << 20);
  for (let got = 0; got < b.length;) {
    const n = await f.read(b.subarray(got));
    if (n === null) break;
    got += n;
  }
  assert.equal(new TextDecoder().decode(b.subarray(0, 4)), "LUKS", `${volume} holds LUKS2`);
  return createHash("sha256").update(b).digest("hex");
}
