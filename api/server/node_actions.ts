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
}

/** Who asked for an action, for the event log. */
export interface ActionRequester {
  readonly name: string;
  readonly role: string;
}

/**
 * Node actions. `reboot` and `shutdown` resolve once the action is *accepted*
 * and must perform it after returning (so the reply reaches the client);
 * calling one while another is under way is idempotent.
 */
export interface NodeActions {
  version(): VersionInfo | Promise<VersionInfo>;
  reboot(by: ActionRequester): Promise<void>;
  shutdown(by: ActionRequester): Promise<void>;
  /** Reset with server-side consent; absent means Unimplemented. */
  reset?(request: ResetRequestData, by: ActionRequester): Promise<ResetAnswer>;
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
