/**
 * Parsing /dev/kmsg records: `pri,seq,usec,flags[,more];text`, optionally
 * followed by `\n KEY=value` dictionary lines (SUBSYSTEM=, DEVICE=). The text
 * escapes non-printable bytes as `\xNN`, which is kept as is.
 * @module
 */

/** Syslog severities, index = level. */
export const KMSG_LEVELS = [
  "emerg",
  "alert",
  "crit",
  "err",
  "warning",
  "notice",
  "info",
  "debug",
] as const;

/** One kernel log record. */
export interface KmsgRecord {
  /** Severity 0 (emerg) .. 7 (debug). */
  readonly level: number;
  /** Syslog facility (0 = kernel). */
  readonly facility: number;
  /** The kernel's sequence number; gaps mean records were lost. */
  readonly seq: number;
  /** Microseconds since boot (CLOCK_MONOTONIC). */
  readonly usec: number;
  /** `c` starts a continuation, `+` continues, `-` otherwise. */
  readonly flags: string;
  readonly text: string;
  /** Dictionary lines (`SUBSYSTEM`, `DEVICE`, ...). */
  readonly fields: Readonly<Record<string, string>>;
}

/** Parses one raw record; undefined when malformed. */
export function parseKmsgRecord(raw: string): KmsgRecord | undefined {
  const semi = raw.indexOf(";");
  if (semi < 0) return undefined;
  const [pri, seq, usec, flags] = raw.slice(0, semi).split(",");
  if (!/^\d+$/.test(pri ?? "") || !/^\d+$/.test(seq ?? "") || !/^\d+$/.test(usec ?? "")) {
    return undefined;
  }
  const [text, ...dict] = raw.slice(semi + 1).split("\n");
  const fields: Record<string, string> = {};
  for (const line of dict) {
    const m = /^ ([^=]+)=(.*)$/.exec(line);
    if (m) fields[m[1]] = m[2];
  }
  const p = Number(pri);
  return {
    level: p & 7,
    facility: p >> 3,
    seq: Number(seq),
    usec: Number(usec),
    flags: flags ?? "-",
    text,
    fields,
  };
}

/** `[    1.234567] text`, as dmesg prints it. */
export function formatKmsgRecord(r: KmsgRecord): string {
  const secs = (r.usec / 1e6).toFixed(6).padStart(12, " ");
  return `[${secs}] ${r.text}`;
}
