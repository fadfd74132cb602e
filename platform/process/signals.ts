/**
 * Linux signal names and numbers (x86_64 and aarch64 agree on these), so the
 * process API speaks names and the native layer numbers.
 * @module
 */

/** Signal numbers by name. */
export const SIGNALS = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGCHLD: 17,
  SIGCONT: 18,
  SIGSTOP: 19,
  SIGTSTP: 20,
  SIGWINCH: 28,
  SIGPWR: 30,
  SIGSYS: 31,
} as const;

/** A signal name such as `"SIGTERM"`. */
export type SignalName = keyof typeof SIGNALS;

/** The number of a signal name. */
export function signalNumber(name: SignalName): number {
  const n = SIGNALS[name];
  if (n === undefined) throw new RangeError(`Unknown signal "${name}"`);
  return n;
}

/** The name of a signal number, or `SIG<n>` for real-time and unknown ones. */
export function signalName(n: number): string {
  for (const [name, value] of Object.entries(SIGNALS)) if (value === n) return name;
  return `SIG${n}`;
}
