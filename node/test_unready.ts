/**
 * A test-only hook that keeps the node from ever becoming ready, so the QEMU
 * tier can prove that an upgraded slot which boots but never gets healthy is
 * marked bad at `machine.upgrade.trial_deadline` and the node goes back to
 * the slot it came from (e2e/upgrade_hang_step.ts). Like the watchdog's hang
 * hook it takes two keys: the kernel command line word
 * `machined.test.unready=1` AND the test-hooks marker file in the read-only
 * root image, which only an image built for tests carries. The word alone
 * only logs that it was ignored.
 * @module
 */
import type { Logger } from "../logs/mod.ts";
import { TEST_HOOKS_MARKER } from "../watchdog/mod.ts";

/** The command line word. */
export const UNREADY_WORD = "machined.test.unready";
/** The unmet condition it raises on MachineStatus. */
export const UNREADY_CONDITION = "test-hook";

/**
 * The reason to show as an unmet condition, or `undefined` when the hook is
 * not asked for or not allowed (logged). Pure but for the log line.
 */
export function unreadyReason(
  cmdline: Map<string, string>,
  testImage: boolean,
  logger: Logger,
): string | undefined {
  if (cmdline.get(UNREADY_WORD) !== "1") return undefined;
  if (!testImage) {
    logger.warn("boot", `${UNREADY_WORD} ignored: this image was not built for tests`, {
      marker: TEST_HOOKS_MARKER,
    });
    return undefined;
  }
  logger.error("boot", `TEST HOOK ${UNREADY_WORD}: this node will never be ready`);
  return `${UNREADY_WORD}=1 on the kernel command line of a test image`;
}
