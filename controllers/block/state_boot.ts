/**
 * What boot does with a STATE partition that holds a LUKS2 header before any
 * config has been read, as pure functions. The config that names the keys may
 * live on STATE itself, so only what the header says can be used: a slot whose
 * token is `machined-tpm` holds its key sealed by the TPM (unsealed under the
 * boot's signed PCR 11 policy), and one whose token is `machined-nodeid` opens
 * with a key derived from the board's SMBIOS UUID; neither needs a config.
 * The boot order is:
 *
 * 1. the `tpm` slots, then the `nodeid` slots, each kind in slot order (each
 *    one argon2id try; a TPM that is absent or refuses costs none);
 * 2. the first that opens maps STATE, its `config.yaml` is read read-only, the
 *    mapping is closed, and boot continues with that config (the provisioner
 *    then unlocks STATE with the config's keys as on any boot);
 * 3. none opens (no such slot, another board, a cleared TPM): `locked`. The node stays in
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

/** The key kinds that open a header by themselves (no config, no operator), in the order tried. */
const TOKEN_ONLY_KINDS = ["tpm", "nodeid"] as const;

/** A kind that opens a header from its token alone. */
export type TokenOnlyKind = typeof TOKEN_ONLY_KINDS[number];

/** A slot to try before any config. */
export interface TokenOnlySlot {
  slot: number;
  kind: TokenOnlyKind;
}

/** What to do with STATE's header at boot. */
export type StateBootDecision =
  | { action: "unlock"; slots: TokenOnlySlot[]; reason: string }
  | { action: "locked"; reason: string };

/** One token-only key tried. */
export interface StateBootAttempt {
  slot: number;
  kind: TokenOnlyKind;
  opened: boolean;
  /** Why it did not open (the board has no UUID, ...); never the key. */
  error?: string;
}

/** Which slots to try before any config is read. Pure. */
export function decideStateBoot(slots: readonly LuksSlot[]): StateBootDecision {
  const tokenOnly = TOKEN_ONLY_KINDS.flatMap((kind) =>
    slots.filter((s) => s.kind === kind).map((s) => ({ slot: s.slot, kind }))
      .sort((a, b) => a.slot - b.slot)
  );
  if (tokenOnly.length === 0) return { action: "locked", reason: lockedReason(slots, []) };
  return {
    action: "unlock",
    slots: tokenOnly,
    reason: `STATE is encrypted: trying ${
      tokenOnly.map(describeKey).join(", ")
    } from its header's tokens before the config is read`,
  };
}

function isTokenOnly(kind: string | undefined): boolean {
  return (TOKEN_ONLY_KINDS as readonly (string | undefined)[]).includes(kind);
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
  const tried = attempts.map((a) => `${describeKey(a)}: ${a.error ?? "did not open"}`);
  const others = slots.filter((s) => !isTokenOnly(s.kind))
    .map((s) => describeKey({ slot: s.slot, kind: s.kind ?? "no token" }));
  const parts = [
    tried.length > 0 ? `tried ${tried.join("; ")}` : "no slot opens from its header's tokens",
    ...(others.length > 0 ? [`${others.join(", ")} need a passphrase`] : []),
  ];
  return `STATE is locked: ${parts.join("; ")}. The node's config is on it: type a passphrase ` +
    `with \`machinectl unlock STATE\` (answered in maintenance mode). STATE is never formatted.`;
}
