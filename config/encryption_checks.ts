/**
 * Cross-field rules of `machine.install.encryption`, on the raw parsed YAML
 * like the other semantic checks: unique slots, a passphrase exactly on
 * `static` keys, and no volume whose keys could all be lost by the node.
 * A passphrase is never quoted: messages name the path and the slot only.
 *
 * Which kinds can be lost: `tpm` (a cleared TPM, a replaced board, a changed
 * PCR policy). `static` is in the config or supplied at boot; `nodeid` is
 * derived from the board's SMBIOS UUID, which does not change. A volume whose
 * only keys are `tpm` is refused: the node could lose every key at once, and
 * a `tpm` slot is sealed with another key's authority, so it could not even
 * be formatted. A `tpm` key beside another kind is a warning
 * ({@link encryptionWarnings}) with the reason.
 *
 * @module
 */
import type { PathSegment } from "./config_error.ts";
import { type Obj, obj } from "./raw_values.ts";
import type { SemanticIssue } from "./semantic_checks.ts";

/** A cross-field problem: the semantic checks' issue, without a target. */
export type EncryptionIssue = SemanticIssue;

const VOLUMES = ["state", "ephemeral"] as const;

/** Every encryption problem under `machine` (a raw, possibly malformed value). */
export function encryptionIssues(machine: Obj): EncryptionIssue[] {
  const enc = obj(obj(machine.install)?.encryption);
  if (!enc) return [];
  const issues: EncryptionIssue[] = [];
  for (const volume of VOLUMES) {
    const keys = obj(enc[volume])?.keys;
    if (!Array.isArray(keys)) continue;
    const base: PathSegment[] = ["machine", "install", "encryption", volume, "keys"];
    issues.push(...checkKeys(keys, base));
  }
  return issues;
}

function checkKeys(keys: unknown[], base: PathSegment[]): EncryptionIssue[] {
  const issues: EncryptionIssue[] = [];
  const slots = new Map<number, number>();
  keys.forEach((raw, i) => {
    const key = obj(raw);
    if (!key) return;
    if (typeof key.slot === "number") {
      const first = slots.get(key.slot);
      if (first !== undefined) {
        issues.push({
          segments: [...base, i, "slot"],
          message: `key slot ${key.slot} is used twice`,
          hint: `first used by keys[${first}]`,
        });
      } else slots.set(key.slot, i);
    }
    const has = key.passphrase !== undefined;
    if (key.kind === "static" && !has) {
      issues.push({
        segments: [...base, i],
        message: "a static key needs a passphrase",
        hint: "add passphrase (kept secret), or use kind nodeid",
      });
    }
    if (key.kind !== "static" && typeof key.kind === "string" && has) {
      issues.push({
        segments: [...base, i, "passphrase"],
        message: `only static keys take a passphrase, not ${key.kind}`,
      });
    }
  });
  const kinds = keys.map((k) => obj(k)?.kind).filter((k) => typeof k === "string");
  if (kinds.length > 0 && kinds.every((k) => k === "tpm")) {
    issues.push({
      segments: base,
      message: "every key is tpm, which the node could lose (a cleared or replaced TPM, " +
        "a boot outside the signed policy) with no other way in",
      hint: "add a static key as the recovery path (or a nodeid key)",
    });
  }
  return issues;
}

/** A warning about a config that is accepted. */
export interface EncryptionWarning {
  path: string;
  message: string;
}

/** Warnings for an accepted encryption config: a `tpm` key, and what it means. */
export function encryptionWarnings(machine: Obj): EncryptionWarning[] {
  const enc = obj(obj(machine.install)?.encryption);
  if (!enc) return [];
  const out: EncryptionWarning[] = [];
  for (const volume of VOLUMES) {
    const keys = obj(enc[volume])?.keys;
    if (!Array.isArray(keys)) continue;
    keys.forEach((k, i) => {
      if (obj(k)?.kind !== "tpm") return;
      out.push({
        path: `machine.install.encryption.${volume}.keys[${i}]`,
        message: "a tpm key is lost when the TPM is cleared, the board replaced or the " +
          "measured boot changes outside the signed policy; it is tried first, and when the " +
          "TPM is absent or refuses the other keys open the volume (a node without a TPM " +
          "skips the slot, VolumeStatus keyNotes says why)",
      });
    });
  }
  return out;
}
