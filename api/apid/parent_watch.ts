/**
 * apid must not outlive machined. The native spawner sets PR_SET_PDEATHSIG, so
 * a killed machined takes apid with it at once; this watch covers every other
 * way apid could be left behind (started by something that does not set the
 * signal, or the signal cleared): when apid's parent changes (it was
 * re-parented to init or a subreaper), machined is gone and apid stops.
 */

/** Options of {@link watchParent}. */
export interface ParentWatchOptions {
  /** How often the parent is checked. @default 250 */
  intervalMs?: number;
  /** The current parent pid (tests). @default () => Deno.ppid */
  ppid?: () => number;
}

/**
 * Calls `onGone` once when the parent pid differs from the one at the start.
 * The timer does not keep the process alive. Returns a function that stops
 * watching.
 */
export function watchParent(onGone: () => void, options: ParentWatchOptions = {}): () => void {
  const ppid = options.ppid ?? (() => Deno.ppid);
  const parent = ppid();
  const timer = setInterval(() => {
    if (ppid() === parent) return;
    clearInterval(timer);
    onGone();
  }, options.intervalMs ?? 250);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
