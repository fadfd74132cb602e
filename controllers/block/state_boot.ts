/**
 * What boot does with a STATE partition that holds a LUKS2 header before any
 * config has been read, as pure functions. The config that names the keys may
 * live on STATE itself, so only what the header says can be used: a slot whose
 * token is `machined-nodeid` opens with a key derived from the board's SMBIOS
 * UUID and needs nothing else. The boot order is:
 *
 * 1. the `nodeid` slots, in slot order (each one argon2id try);
 * 2. the first that opens maps STATE, its `config.yaml` is read read-only, the
 *    mapping is closed, and boot continues with that config (the provisioner
 *    then unlocks STATE with the config's keys as on any boot);
 * 3. none opens (no `nodeid` slot, another board): `locked`. The node stays in
 *    maintenance saying why, STATE is never formatted or written, and the
 *    late sources stop there (a CIDATA or URL config would make the node
 *    another one over a disk it cannot read) until an operator's passphrase
 *    arrives through UnlockVolume, or a config through `apply-config --insecure`.
 *
 * @module
 */
import type { LuksSlot } from "../../platform/crypt/mod.ts";
import { describeKey } from "./decide_encryption.ts";

/** The condition MachineStatus shows while STATE waits for a passphrase. */
export const STATE_LOCKED_CONDITION = "locked";

/** The key kind that opens a header by itself (no config, no operator). */
const TOKEN_ONLY_KIND = "nodeid";

/** What to do with STATE's header at boot. */
export type StateBootDecision =
  | { action: "unlock"; slots: number[]; reason: string }
  | { action: "locked"; reason: string };

/** One token-only key tried. */
export interface StateBootAttempt {
  slot: number;
  opened: boolean;
  /** Why it did not open (the board has no UUID, ...); never the key. */
  error?: string;
}

/** Which slots to try before any config is read. Pure. */
export function decideStateBoot(slots: readonly LuksSlot[]): StateBootDecision {
  const tokenOnly = slots.filter((s) => s.kind === TOKEN_ONLY_KIND).map((s) => s.slot)
    .sort((a, b) => a - b);
  if (tokenOnly.length === 0) return { action: "locked", reason: lockedReason(slots, []) };
  return {
    action: "unlock",
    slots: tokenOnly,
    reason: `STATE is encrypted: trying ${
      tokenOnly.map((s) => describeKey({ slot: s, kind: TOKEN_ONLY_KIND })).join(", ")
    } from its header's tokens before the config is read`,
  };
}

/** The slot that opened STATE, or why it is locked. Pure. */
export function concludeStateBoot(
  slots: readonly LuksSlot[],
  attempts: readonly StateBootAttempt[],
): { state: "unlocked"; slot: number } | { state: "locked"; reason: string } {
  const ok = attempts.find((a) => a.opened);
  if (ok) return { state: "unlocked", slot: ok.slot };
  return { state: "locked", reason: lockedReason(slots, attempts) };
}

function lockedReason(slots: readonly LuksSlot[], attempts: readonly StateBootAttempt[]): string {
  const tried = attempts.map((a) =>
    `${describeKey({ slot: a.slot, kind: TOKEN_ONLY_KIND })}: ${a.error ?? "did not open"}`
  );
  const others = slots.filter((s) => s.kind !== TOKEN_ONLY_KIND)
    .map((s) => describeKey({ slot: s.slot, kind: s.kind ?? "no token" }));
  const parts = [
    tried.length > 0 ? `tried ${tried.join("; ")}` : "no slot opens from its header's tokens",
    ...(others.length > 0 ? [`${others.join(", ")} need a passphrase`] : []),
  ];
  return `STATE is locked: ${parts.join("; ")}. The node's config is on it: type a passphrase ` +
    `with \`machinectl unlock STATE\` (answered in maintenance mode). STATE is never formatted.`;
}
