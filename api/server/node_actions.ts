/**
 * What the API asks of the node beyond the store: power actions and version
 * facts. The integrator implements it in machined; tests use a recording one.
 */

/** Facts returned by the Version RPC. */
export interface VersionInfo {
  readonly version: string;
  readonly commit: string;
  readonly denoVersion: string;
  readonly os: string;
  readonly arch: string;
  readonly hostname: string;
  /** The kernel's boot id; empty when unknown. */
  readonly bootId?: string;
  /** The image's version; empty outside an image. */
  readonly imageVersion?: string;
  /** The booted slot (`A`, `B`); empty outside an image. */
  readonly slot?: string;
}

/** Who asked for an action, for the event log. */
export interface ActionRequester {
  readonly name: string;
  readonly role: string;
}

/**
 * How a reboot boots the next kernel: `kexec` straight into the entry the
 * loader would boot next, `powercycle` through the firmware and the loader;
 * `default` is a cold reboot for Reboot and kexec for an upgrade.
 */
export type RebootMode = "default" | "kexec" | "powercycle";

/**
 * Node actions. `reboot` and `shutdown` resolve once the action is *accepted*
 * and must perform it after returning (so the reply reaches the client);
 * calling one while another is under way is idempotent.
 */
export interface NodeActions {
  version(): VersionInfo | Promise<VersionInfo>;
  reboot(by: ActionRequester, mode?: RebootMode): Promise<void>;
  shutdown(by: ActionRequester): Promise<void>;
  /** Reset with server-side consent; absent means Unimplemented. */
  reset?(request: ResetRequestData, by: ActionRequester): Promise<ResetAnswer>;
  /** Install a streamed upgrade bundle; absent means Unimplemented. */
  upgrade?(
    bundle: AsyncIterable<Uint8Array>,
    options: { stage: boolean; fromUrl?: string; force?: boolean; rebootMode?: RebootMode },
    by: ActionRequester,
  ): Promise<UpgradeAnswer>;
  /** Boot the other (blessed) slot next; absent means Unimplemented. */
  rollback?(options: { stage: boolean }, by: ActionRequester): Promise<RollbackAnswer>;
  /**
   * Try an operator's passphrase on a `locked` volume and open it; absent
   * means Unimplemented. The passphrase never enters a log, a resource or
   * an error. Rejects with {@link UnlockRefusedError}.
   */
  unlockVolume?(
    request: { volume: string; passphrase: Uint8Array },
    by: ActionRequester,
  ): Promise<UnlockVolumeAnswer>;
}

/** What an UnlockVolume opened. */
export interface UnlockVolumeAnswer {
  readonly volume: string;
  readonly slot: number;
  readonly mappingPath: string;
}

/**
 * An UnlockVolume refused, with its gRPC code: not-found for an unknown
 * volume, failed-precondition for one that is not locked, permission-denied
 * for a passphrase that opens no keyslot, invalid-argument for one out of
 * bounds, unavailable when the header cannot be read or opened now.
 */
export class UnlockRefusedError extends Error {
  override name = "UnlockRefusedError";
  constructor(
    readonly code:
      | "not-found"
      | "failed-precondition"
      | "permission-denied"
      | "invalid-argument"
      | "unavailable",
    message: string,
  ) {
    super(message);
  }
}

/** What an Upgrade installed. */
export interface UpgradeAnswer {
  readonly version: string;
  readonly slot: string;
  readonly entry: string;
  readonly bytes: number;
  readonly rebooting: boolean;
  readonly bootId: string;
  readonly keyId: string;
}

/** Where a Rollback goes. */
export interface RollbackAnswer {
  readonly slot: string;
  readonly rebooting: boolean;
  readonly bootId: string;
}

/**
 * An upgrade or rollback refused (nothing armed), with the gRPC code it maps
 * to: permission-denied for a bundle no trusted key signed, invalid-argument
 * for a malformed or corrupt bundle, failed-precondition for a bundle for
 * another machine or a slot that cannot be used, unavailable when the ESP
 * cannot be reached now, data-loss when the ESP read back other bytes,
 * deadline-exceeded when the bundle stalled or the upgrade ran past its
 * deadline, resource-exhausted when the ESP is full.
 */
export class UpgradeRefusedError extends Error {
  override name = "UpgradeRefusedError";
  constructor(
    readonly code:
      | "permission-denied"
      | "invalid-argument"
      | "failed-precondition"
      | "unavailable"
      | "data-loss"
      | "deadline-exceeded"
      | "resource-exhausted",
    message: string,
  ) {
    super(message);
  }
}

/** How a reset stops the node. */
export type ResetMode = "graceful" | "forced";

/** A Reset call. */
export interface ResetRequestData {
  /** Empty for the first phase (preview and challenge). */
  readonly challenge: string;
  readonly mode: ResetMode;
  readonly powerOff: boolean;
}

/** A partition a reset would wipe. */
export interface ResetPartitionInfo {
  readonly label: string;
  readonly disk: string;
  readonly guid: string;
  readonly sizeBytes: number;
  readonly number: number;
}

/** The answer to a Reset call. */
export interface ResetAnswer {
  readonly partitions: readonly ResetPartitionInfo[];
  /** The first phase's challenge; empty once accepted. */
  readonly challenge: string;
  /** Epoch ms the challenge expires; 0 once accepted. */
  readonly expires: number;
  readonly bootId: string;
  readonly accepted: boolean;
  /** The current step of a reset under way; empty otherwise. */
  readonly progress: string;
  readonly mode?: ResetMode;
}

/**
 * A reset refused with nothing changed: `failed-precondition` for a challenge
 * that does not hold (another boot, expired, another set), `unavailable` when
 * the node cannot say yet what it owns (its record is not loaded).
 */
export class ResetRefusedError extends Error {
  override name = "ResetRefusedError";
  constructor(readonly code: "failed-precondition" | "unavailable", message: string) {
    super(message);
  }
}
