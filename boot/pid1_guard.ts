/**
 * PID 1 must never exit: a dead PID 1 is a kernel panic. This installs handlers
 * that log and swallow stray errors and rejections, and turns a fatal boot
 * error into a logged message and a reboot after a delay.
 */
import type { Logger } from "../logs/mod.ts";
import type { PowerBackend } from "../platform/power/mod.ts";

/** Logs and swallows uncaught errors and unhandled rejections. */
export function installPid1Guards(logger: Logger): void {
  globalThis.addEventListener("unhandledrejection", (e) => {
    e.preventDefault();
    logger.error("pid1", "unhandled rejection (ignored)", { error: describe(e.reason) });
  });
  globalThis.addEventListener("error", (e) => {
    e.preventDefault();
    logger.error("pid1", "uncaught error (ignored)", { error: describe(e.error ?? e.message) });
  });
}

/** How long the fatal path waits for sync(2) before it reboots anyway. */
export const FATAL_SYNC_DEADLINE_MS = 30_000;

/**
 * The last resort: print why to the console, wait so a human can read it, then
 * reboot. Never returns.
 */
export async function fatalReboot(
  error: unknown,
  power: PowerBackend,
  logger: Logger,
  delayMs = 10_000,
): Promise<never> {
  logger.error("pid1", "fatal error: rebooting", { error: describe(error), inMs: delayMs });
  console.error(`machined: FATAL: ${describe(error)}\nmachined: rebooting in ${delayMs / 1000} s`);
  await new Promise((r) => setTimeout(r, delayMs));
  try {
    // A hung sync (a stuck device) must not keep the node from rebooting.
    await Promise.race([power.sync(), new Promise((r) => setTimeout(r, FATAL_SYNC_DEADLINE_MS))]);
    await power.restart();
  } catch (e) {
    logger.error("pid1", "reboot failed", { error: describe(e) });
  }
  // reboot(2) does not return on success; if it failed, idle forever rather than exit.
  for (;;) await new Promise((r) => setTimeout(r, 3_600_000));
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    return `${e.name}: ${e.message}${e.cause ? ` (cause: ${describe(e.cause)})` : ""}`;
  }
  return String(e);
}
