/**
 * The image's kernel modules, loaded beside boot's other work. finit_module runs
 * on a native thread (native-ops), so while the kernel links and initialises the
 * modules on one CPU, the config, the node PKI and the API host go on on the other;
 * under TCG the 43 modules of the x86_64 image take 0.8–1.0 s (issue 27).
 * Nothing before the controllers needs them: the config is read from files, the
 * PKI is computed, the edge binds a socket. The controllers do (VLANs, bonds,
 * WireGuard, dm-crypt, containerd's overlay), so boot awaits the load before it
 * starts them.
 *
 * @module
 */
import type { EventBus } from "../events/mod.ts";
import type { Logger } from "../logs/mod.ts";
import type { Clock } from "../runtime/mod.ts";
import type { KmodBackend } from "../platform/kmod/mod.ts";
import { pathExists } from "../pki/mod.ts";
import { runSequence, task } from "./sequence.ts";

/** How long the modules may take before boot goes on without the rest of them. */
export const IMAGE_MODULES_DEADLINE_MS = 60_000;

/** What {@link startImageModules} needs. */
export interface ImageModulesDeps {
  kmod: Pick<KmodBackend, "loadModule">;
  /** The image's list (imager/initramfs): one `path [parameters]` per line, dependencies first. */
  listPath: string;
  events: EventBus;
  logger: Logger;
  /** @default IMAGE_MODULES_DEADLINE_MS */
  deadlineMs?: number;
  /** The deadline's clock. @default the system clock */
  clock?: Clock;
}

/**
 * Starts loading the image's modules and returns at once. The promise settles
 * when the load has ended, failed (reported) or overrun its deadline (reported,
 * left behind); it never rejects, so awaiting it cannot fail boot. The load is a
 * sequence of its own, `modules`, so its start, end and overrun are events as
 * the boot sequence's tasks are.
 */
export function startImageModules(deps: ImageModulesDeps): Promise<void> {
  const { events, logger, clock } = deps;
  const load = task("imageModules", () => loadImageModules(deps), {
    optional: true,
    deadlineMs: deps.deadlineMs ?? IMAGE_MODULES_DEADLINE_MS,
  });
  return runSequence("modules", [{ name: "kernelModules", tasks: [load] }], {
    events,
    logger,
    clock,
  })
    .catch((error) => logger.error("boot", "the image's modules", { error }));
}

/**
 * Loads the modules the image lists (absolute paths, dependencies first, as the
 * imager resolved them, each optionally followed by its parameters). Already
 * loaded or built-in modules are fine; one that fails is reported and the rest go on.
 */
async function loadImageModules(deps: ImageModulesDeps): Promise<void> {
  const { kmod, listPath, logger } = deps;
  if (!(await pathExists(listPath))) return;
  const lines = (await Deno.readTextFile(listPath)).split("\n").map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  let loaded = 0;
  for (const line of lines) {
    // `path [parameters]`: the imager writes bonding's `max_bonds=0` there.
    const [path, ...params] = line.split(/\s+/);
    try {
      if (await kmod.loadModule(path, params.join(" ") || undefined) === "loaded") loaded++;
    } catch (e) {
      logger.warn("boot", `module ${path} failed to load`, { error: e });
    }
  }
  logger.info("boot", "image modules loaded", { listed: lines.length, loaded });
}
