/**
 * A test-only hook that hangs machined's JavaScript thread, so the QEMU tier
 * can prove that the watchdog reboots a node whose userspace hangs
 * (e2e/upgrade_hang_step.ts). It takes two keys: the kernel command line
 * word `machined.test.hang_after_s=N` AND the file {@link TEST_HOOKS_MARKER}
 * in the read-only root image, which only an image built for tests carries
 * (the e2e adds it with `extraFiles`). The word alone does nothing but log
 * that it was ignored, so a production image cannot be hung by it.
 * @module
 */
import type { Logger } from "../logs/mod.ts";

/** The file (in the read-only root image) that allows test hooks. */
export const TEST_HOOKS_MARKER = "/etc/machined/test-hooks";
/** The command line word: seconds after the watchdog is taken over to hang. */
export const HANG_WORD = "machined.test.hang_after_s";

/** Whether and when to hang: `undefined` when not asked or not allowed. Pure. */
export function hangAfterS(
  cmdline: Map<string, string>,
  testImage: boolean,
  logger: Logger,
): number | undefined {
  const raw = cmdline.get(HANG_WORD);
  if (raw === undefined) return undefined;
  if (!testImage) {
    logger.warn("watchdog", `${HANG_WORD} ignored: this image was not built for tests`, {
      marker: TEST_HOOKS_MARKER,
    });
    return undefined;
  }
  const s = Number(raw);
  return Number.isFinite(s) && s >= 0 ? s : undefined;
}

/** Blocks the calling thread forever (the hang the watchdog must end). */
export function busyLoop(): never {
  for (;;) {
    // Deliberately nothing: no timer, no I/O, no microtask ever runs again.
  }
}

/** Whether this root image was built for tests (has the marker). */
export function isTestImage(exists: (path: string) => boolean = fileExists): boolean {
  return exists(TEST_HOOKS_MARKER);
}

function fileExists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Schedules the hang; before it, one line on the kernel log at crit level
 * (visible on a `loglevel=3` console) so the test can tell the hang from a crash.
 */
export function scheduleHang(
  afterS: number,
  logger: Logger,
  hang: () => void = busyLoop,
): ReturnType<typeof setTimeout> {
  return setTimeout(() => {
    const line = `machined: TEST HOOK ${HANG_WORD}: hanging the JavaScript thread now`;
    logger.error("watchdog", line);
    try {
      Deno.writeTextFileSync("/dev/kmsg", `<2>${line}\n`);
    } catch {
      console.error(line);
    }
    hang();
  }, afterS * 1000);
}
