/**
 * The kernel log as a stream, for `machinectl dmesg [-f]`. The native backend
 * reads /dev/kmsg (needs root or CAP_SYSLOG); the fake serves records a test
 * appends.
 * @module
 */
import type { KmsgRecord } from "./record.ts";

/** Options of {@link KmsgBackend.read}. */
export interface KmsgReadOptions {
  /** After the records already in the buffer, keep streaming new ones. */
  follow?: boolean;
  /** Ends the stream (it also ends when the consumer stops iterating). */
  signal?: AbortSignal;
}

/** Something that went missing in the stream: the kernel overwrote records before they were read. */
export interface KmsgGap {
  readonly lost: true;
}

/**
 * Reading the kernel log.
 *
 * Idempotence: each `read` is an independent reader starting at the oldest
 * record still in the kernel's buffer; reading changes nothing.
 */
export interface KmsgBackend {
  /**
   * Records from the oldest kept; with `follow`, then new ones until `signal`.
   * @throws SysError when the log cannot be opened (EPERM without privileges).
   */
  read(options?: KmsgReadOptions): AsyncIterable<KmsgRecord | KmsgGap>;
}
