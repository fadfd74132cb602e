/**
 * What the shutdown sequence is handed to carry a reset out. Reset owns the contract
 * (how a reset stops services, what it wipes) and boot/shutdown.ts runs it, so the type
 * lives here, below the boot sequence that consumes it.
 * @module
 */

/**
 * A reset carried out by the shutdown sequence: its stopServices step is
 * graceful (the services' grace periods, the payload first) until
 * `gracefulDeadlineMs`, then forced (every service process killed at once);
 * a forced reset kills at once. A `wipe` step runs once the volumes are
 * unmounted (detached when busy), then the node reboots or powers off.
 */
export interface ResetSequence {
  readonly mode: "graceful" | "forced";
  readonly gracefulDeadlineMs: number;
  /** Kills every service process at once (cgroup.kill). */
  forceKill(): Promise<void>;
  /** Wipes what was consented to. */
  wipe(): Promise<void>;
  /** Called as each phase starts (a reset's progress). */
  onStep?(phase: string): void;
}
