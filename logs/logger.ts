/**
 * machined's own logger: one line per message to the console (the serial
 * console on a node) and into a {@link LogRing} served as the `machined` log.
 */
import { LogRing } from "./ring.ts";

/** Severity. */
export type Level = "debug" | "info" | "warn" | "error";

/** A structured logger. */
export interface Logger {
  log(level: Level, subject: string, message: string, fields?: Record<string, unknown>): void;
  info(subject: string, message: string, fields?: Record<string, unknown>): void;
  warn(subject: string, message: string, fields?: Record<string, unknown>): void;
  error(subject: string, message: string, fields?: Record<string, unknown>): void;
}

/** Renders `k=v` pairs, quoting values with spaces. */
export function formatFields(fields: Record<string, unknown> = {}): string {
  return Object.entries(fields)
    .map(([k, v]) => {
      const s = v instanceof Error ? v.message : typeof v === "string" ? v : JSON.stringify(v);
      return `${k}=${/[\s"]/.test(s ?? "") ? JSON.stringify(s) : s}`;
    })
    .join(" ");
}

/** machined's logger: its ring, and a level that can change while it runs. */
export interface RingLogger extends Logger {
  readonly ring: LogRing;
  /** The least severe level written (`machine.logging.level`). */
  readonly level: Level;
  /** Changes the level from the next message on. */
  setLevel(level: Level): void;
}

/** Creates the logger; `console` may be silenced for tests. */
export function createLogger(
  options: { ring?: LogRing; console?: boolean; minLevel?: Level } = {},
): RingLogger {
  const ring = options.ring ?? new LogRing(5000);
  const order: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  let level: Level = options.minLevel ?? "info";
  let min = order[level];
  const log = (
    level: Level,
    subject: string,
    message: string,
    fields?: Record<string, unknown>,
  ) => {
    if (order[level] < min) return;
    const f = formatFields(fields);
    const text = `[${level}] ${subject}: ${message}${f ? " " + f : ""}`;
    ring.push("log", text);
    if (options.console !== false) {
      const line = `${new Date().toISOString()} ${text}`;
      if (level === "error" || level === "warn") console.error(line);
      else console.log(line);
    }
  };
  return {
    ring,
    get level() {
      return level;
    },
    setLevel(next: Level) {
      if (!(next in order)) throw new RangeError(`unknown log level "${next}"`);
      level = next;
      min = order[next];
    },
    log,
    info: (s, m, f) => log("info", s, m, f),
    warn: (s, m, f) => log("warn", s, m, f),
    error: (s, m, f) => log("error", s, m, f),
  };
}
