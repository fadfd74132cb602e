/**
 * Each refusal of upgrade as the API's {@link UpgradeRefusedError}: a
 * bundle no trusted key signed is permission-denied, a malformed or corrupt
 * one invalid-argument, one for another machine or an unusable slot
 * failed-precondition, as is one the downgrade floor refuses (below it,
 * equal to it, or without an order), an unreachable ESP unavailable, an ESP
 * that reads back other bytes data-loss, a stalled or overdue bundle
 * deadline-exceeded, a full ESP resource-exhausted. Pure.
 */
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { BundleError, type BundleRefusal, SlotError, type SlotRefusal } from "../bundle/mod.ts";

const BUNDLE: Record<BundleRefusal, UpgradeRefusedError["code"]> = {
  "bad-magic": "invalid-argument",
  "bad-manifest": "invalid-argument",
  "bad-cmdline": "invalid-argument",
  "wrong-algorithm": "permission-denied",
  "unknown-key": "permission-denied",
  "bad-signature": "permission-denied",
  "wrong-compatible": "failed-precondition",
  "file-mismatch": "invalid-argument",
  "truncated": "invalid-argument",
  "trailing-bytes": "invalid-argument",
  "stalled": "deadline-exceeded",
  "untrusted-uki": "permission-denied",
  "bad-uki": "invalid-argument",
};

const SLOT: Record<SlotRefusal, UpgradeRefusedError["code"]> = {
  "booted-slot": "failed-precondition",
  "no-booted-slot": "failed-precondition",
  "nothing-to-roll-back": "failed-precondition",
  "slot-bad": "failed-precondition",
  "esp-busy": "unavailable",
  "verify-failed": "data-loss",
  "downgrade": "failed-precondition",
  "replay": "failed-precondition",
  "unordered": "failed-precondition",
  "no-space": "resource-exhausted",
  "bad-tries": "invalid-argument",
  "signed-boot": "failed-precondition",
  "kernel-args": "failed-precondition",
  "no-entry": "failed-precondition",
  "bad-entry": "failed-precondition",
  "extension-dropped": "failed-precondition",
};

/** `e` as an UpgradeRefusedError when it is a refusal; undefined otherwise. */
export function toRefusal(e: unknown): UpgradeRefusedError | undefined {
  if (e instanceof UpgradeRefusedError) return e;
  if (e instanceof BundleError) return new UpgradeRefusedError(BUNDLE[e.reason], e.message);
  if (e instanceof SlotError) return new UpgradeRefusedError(SLOT[e.reason], e.message);
  if (e instanceof Deno.errors.NotFound && /EFI System Partition/.test(e.message)) {
    return new UpgradeRefusedError("unavailable", e.message);
  }
  return undefined;
}
