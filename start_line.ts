/**
 * machined's first console line as PID 1, `machined: start uptime_s=5.83`,
 * from the guest's own clock (/proc/uptime): main.ts imports this module
 * first, so in the bundle the image runs its top-level code is evaluated
 * before any other module's, and the host can split "root mounted → first
 * JS" (Deno's exec, V8, reading main.js) from module evaluation, which ends
 * at `machined: main uptime_s=…` (printed by main.ts). Only PID 1 prints:
 * dev mode and tests stay quiet.
 *
 * @module
 */

/** The phases machined marks on the console: its first JS, and main() after every module. */
export type StartPhase = "start" | "main";

/** `machined: <phase> uptime_s=<uptime>`, the shape e2e/boot tests parse (imager/boot_console.ts). */
export function startLine(phase: StartPhase, uptime: string): string {
  return `machined: ${phase} uptime_s=${uptime}`;
}

/**
 * Prints the `phase` line to stderr synchronously when this is PID 1 and
 * returns the uptime printed; undefined (and nothing printed) otherwise.
 */
export function printStartLine(phase: StartPhase): string | undefined {
  if (Deno.pid !== 1) return undefined;
  let uptime: string | undefined;
  try {
    uptime = Deno.readTextFileSync("/proc/uptime").split(" ")[0];
  } catch {
    return undefined; // no /proc: nothing to measure against
  }
  const bytes = new TextEncoder().encode(startLine(phase, uptime) + "\n");
  for (let n = 0; n < bytes.length;) n += Deno.stderr.writeSync(bytes.subarray(n));
  return uptime;
}

// The line itself: the first top-level code of the bundle (PID 1 only).
printStartLine("start");
