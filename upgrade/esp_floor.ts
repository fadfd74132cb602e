/**
 * The downgrade floor on the boot partition (the UEFI ESP, or the Pi's boot
 * FAT): one small file at its root, `/machined-floor.txt`, that the upgrade
 * layer alone owns. A reset wipes STATE but never a boot partition
 * (controllers/block/reset_plan.ts), and no slot plan touches the root's
 * other files, so the floor outlives both a reset and a slot write. The file
 * is written only inside an ESP write session and only upward:
 * {@link nextEspFloor} (pure) decides whether a bless raises it, and nothing
 * in machined lowers it, a forced downgrade included. A file that holds no
 * ordered version counts as none (and the next raise replaces it).
 * @module
 */
import type { EspBackend, EspFiles } from "../platform/esp/mod.ts";
import { textContent } from "../platform/esp/mod.ts";
import { compareVersions, highestVersion, isOrdered } from "./version_order.ts";

/** The floor file's path on the boot partition. */
export const ESP_FLOOR_FILE = "/machined-floor.txt";

/** The floor a file's text holds (its first line); undefined when it holds no ordered version. Pure. */
export function parseEspFloor(text: string): string | undefined {
  const v = text.split("\n")[0].trim();
  return isOrdered(v) ? v : undefined;
}

/** The file's text for `floor`. Pure. */
export function renderEspFloor(floor: string): string {
  return `${floor}\n`;
}

/**
 * The value to write when the floor on the ESP is `current` and
 * `candidates` (the version just blessed, STATE's recorded floor) may raise
 * it: the highest ordered candidate when it is above `current`, else
 * undefined (nothing to write: the floor never falls). Pure.
 */
export function nextEspFloor(
  current: string | undefined,
  candidates: readonly (string | undefined)[],
): string | undefined {
  const top = highestVersion(...candidates);
  if (top === undefined) return undefined;
  if (isOrdered(current) && compareVersions(top, current)! <= 0) return undefined;
  return top;
}

/** The floor in `fs`'s floor file; undefined when there is none. */
export async function readFloorFile(fs: EspFiles): Promise<string | undefined> {
  try {
    return parseEspFloor(await fs.readText(ESP_FLOOR_FILE));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** The floor recorded on the ESP (a read-only session). @throws what reading the ESP throws */
export function readEspFloor(esp: EspBackend): Promise<string | undefined> {
  return esp.read(readFloorFile);
}

/**
 * Raise the ESP's floor to the highest of `candidates` if that is above it:
 * decided on a read, then again inside the write session (written as
 * `.new`, renamed over, the root synced). Returns the value written, or
 * undefined when nothing rose (no write session opened).
 */
export async function raiseEspFloor(
  esp: EspBackend,
  candidates: readonly (string | undefined)[],
): Promise<string | undefined> {
  if (nextEspFloor(await readEspFloor(esp), candidates) === undefined) return undefined;
  return await esp.write(async (fs) => {
    const next = nextEspFloor(await readFloorFile(fs), candidates);
    if (next === undefined) return undefined;
    await fs.writeFile(`${ESP_FLOOR_FILE}.new`, textContent(renderEspFloor(next)));
    await fs.rename(`${ESP_FLOOR_FILE}.new`, ESP_FLOOR_FILE);
    await fs.syncDir("/");
    return next;
  });
}
