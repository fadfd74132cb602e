/**
 * Log capture: bounded in-memory rings with followers, and machined's own
 * logger that writes to the console and to a ring.
 *
 * @example
 * ```ts
 * import { createLogger } from "./logs/mod.ts";
 * const logger = createLogger({ console: false });
 * logger.info("boot", "mounted", { path: "/proc" });
 * console.log(logger.ring.tail(1)[0].text); // [info] boot: mounted path=/proc
 * ```
 * @module
 */
export * from "./ring.ts";
export * from "./logger.ts";
