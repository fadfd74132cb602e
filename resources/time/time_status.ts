/**
 * TimeStatus: how the node's clock is synchronised: whether it is, from which
 * server, the last measured offset and correction, and the last error. The
 * time sync controller writes the single resource; `machinectl get time`
 * reads it.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const TIME_STATUS = "TimeStatus";
/** The single TimeStatus's id. */
export const TIME_STATUS_ID = "node";

/** How the last offset was corrected: stepped at once, or slewed by the kernel. */
export type TimeCorrection = "step" | "slew";

export interface TimeStatusSpec {
  /** `machine.time.disabled`: nothing touches the clock. */
  readonly disabled: boolean;
  /**
   * The clock was corrected from a server, and the last successful sync is
   * not older than four sync intervals.
   */
  readonly synced: boolean;
  /** The server of the last successful sync, as configured; empty before one. */
  readonly server: string;
  /** The address that answered it. */
  readonly address: string;
  /** Server time minus local time before the correction, in ms (null before a sync). */
  readonly offsetMs: number | null;
  /** Round-trip delay of that exchange, in ms. */
  readonly delayMs: number | null;
  readonly stratum: number | null;
  readonly correction: TimeCorrection | null;
  /** Epoch ms of the last successful sync, on the corrected clock. */
  readonly lastSync: number | null;
  /** Successful syncs since machined started. */
  readonly syncCount: number;
  /** Epoch ms the next query is due (null when disabled). */
  readonly nextSync: number | null;
  /**
   * Problems seen in the last round: servers that failed before one answered
   * (timeouts, kiss-of-death, dropped servers), or why none did. Empty when
   * the first server asked gave a usable sample.
   */
  readonly lastError: string;
}

export const timeStatusDescriptor: ResourceDescriptor<typeof TIME_STATUS, TimeStatusSpec> = {
  type: TIME_STATUS,
  namespace: "time",
  aliases: ["timestatus", "timestatuses", "time"],
  description: "Clock synchronisation state: server, offset, last sync",
  columns: [
    { header: "SYNCED", value: (s) => s.disabled ? "disabled" : String(s.synced) },
    { header: "SERVER", value: (s) => s.server },
    { header: "OFFSET", value: (s) => s.offsetMs === null ? "" : `${s.offsetMs.toFixed(3)}ms` },
    { header: "SYNCS", value: (s) => String(s.syncCount) },
    { header: "ERROR", value: (s) => s.lastError },
  ],
};
