/**
 * Test helpers for the watchdog wiring.
 * @module
 */
import type { Logger } from "../logs/mod.ts";

/** A logger that keeps its lines. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string, subject: string, message: string) =>
    lines.push(`${level} ${subject}: ${message}`);
  return {
    lines,
    log,
    info: (s, m) => log("info", s, m),
    warn: (s, m) => log("warn", s, m),
    error: (s, m) => log("error", s, m),
  };
}
