/**
 * The `tpm` key kind on a real node, for the Secure Boot case (issue 29):
 * EPHEMERAL is configured LUKS2 with a `static` key in slot 0 and a `tpm` key
 * in slot 1. On the first boot the format seals slot 1 by the TPM (the
 * signed UKI's `.pcrpkey`, carried by machined-init); after every later boot
 * (the upgrade to another signed UKI, the rollback) VolumeStatus says the
 * TPM opened it, and the LUKS2 header has not changed (no reseal); with the
 * TPM's state cleared, the static key opens it and the status says why.
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { waitForDocs } from "./helpers.ts";
import { partitionRange } from "./luks_host.ts";

/** The config's encryption: EPHEMERAL by a static recovery key and a TPM-sealed key. */
export const TPM_EPHEMERAL = {
  ephemeral: {
    keys: [
      { slot: 0, kind: "static", passphrase: "e2e recovery passphrase for EPHEMERAL" },
      { slot: 1, kind: "tpm" },
    ],
  },
};

type Eph = {
  phase: string;
  encrypted: boolean;
  unlockedBy: { slot: number; kind: string } | null;
  keySlots: { slot: number; kind: string; proven: boolean }[];
  keyNotes: string[];
};

/** EPHEMERAL's VolumeStatus once it is ready (throws on failed or locked). */
export async function ephemeralReady(client: string, port: number): Promise<Eph> {
  const [doc] = await waitForDocs(client, port, ["volumestatus", "EPHEMERAL"], (d) => {
    const s = d[0]?.spec as Eph | undefined;
    if (s?.phase === "failed" || s?.phase === "locked") {
      throw new Error(`EPHEMERAL ${s.phase}: ${JSON.stringify(s)}`);
    }
    return s?.phase === "ready";
  }, 240_000);
  return doc.spec as unknown as Eph;
}

/** First boot: formatted with both slots, the TPM's sealed without a note. */
export async function checkTpmEnrolled(client: string, port: number): Promise<void> {
  const s = await ephemeralReady(client, port);
  assert.equal(s.encrypted, true, JSON.stringify(s));
  assert.deepEqual(s.keySlots.map((k) => [k.slot, k.kind]), [[0, "static"], [1, "tpm"]]);
  assert.deepEqual(s.keyNotes, [], "no tpm slot skipped");
}

/** A later boot: the TPM opened EPHEMERAL, and no other key was needed. */
export async function checkTpmUnlocked(client: string, port: number): Promise<void> {
  const s = await ephemeralReady(client, port);
  assert.deepEqual(s.unlockedBy, { slot: 1, kind: "tpm" }, JSON.stringify(s));
  assert.deepEqual(s.keyNotes, []);
}

/**
 * A boot with a fresh TPM (its state cleared, as after a TPM clear or a board
 * swap): the sealed key cannot be unsealed, the static key opens EPHEMERAL,
 * and the status says why the TPM did not.
 */
export async function checkStaticFallback(client: string, port: number): Promise<Eph> {
  const s = await ephemeralReady(client, port);
  assert.deepEqual(s.unlockedBy, { slot: 0, kind: "static" }, JSON.stringify(s));
  assert.ok(s.keyNotes.some((n) => n.startsWith("slot 1 (tpm): ")), JSON.stringify(s.keyNotes));
  return s;
}

/** SHA-256 of EPHEMERAL's LUKS2 header area (16 MiB) as the disk image holds it. */
export async function ephemeralHeaderSha(image: string): Promise<string> {
  const { offset } = await partitionRange(image, "EPHEMERAL");
  using f = await Deno.open(image, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const b = new Uint8Array(16 << 20);
  for (let got = 0; got < b.length;) {
    const n = await f.read(b.subarray(got));
    if (n === null) break;
    got += n;
  }
  assert.equal(new TextDecoder().decode(b.subarray(0, 4)), "LUKS", "EPHEMERAL holds LUKS2");
  return createHash("sha256").update(b).digest("hex");
}
