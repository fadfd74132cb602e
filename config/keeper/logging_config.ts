/**
 * `machine.logging` applied while machined runs: `level` filters machined's
 * own logger and `ring_lines` sizes every service's in-memory log ring (the
 * ones that exist, resized, and the ones made later). Both follow the
 * MachineConfig resource, so ApplyConfiguration (or dev mode's file reload)
 * changes them without a restart; with no valid config the defaults stay.
 */
import type { RingLogger } from "../../logs/mod.ts";
import { MACHINE_CONFIG, type MachineStore } from "../../resources/mod.ts";
import type { Supervisor } from "../../supervisor/mod.ts";

/** Starts following the config; returns a function that stops it. */
export function followLoggingConfig(
  store: MachineStore,
  deps: { logger: RingLogger; supervisor: Pick<Supervisor, "setRingLines"> },
): () => void {
  const abort = new AbortController();
  (async () => {
    for await (const ev of store.watch(MACHINE_CONFIG, { signal: abort.signal })) {
      if (ev.kind !== "created" && ev.kind !== "updated") continue;
      const logging = ev.resource.spec.config.machine.logging;
      if (!logging) continue;
      if (logging.level !== deps.logger.level) {
        deps.logger.setLevel(logging.level);
        deps.logger.info("logging", `log level ${logging.level}`);
      }
      deps.supervisor.setRingLines(logging.ring_lines);
    }
  })();
  return () => abort.abort();
}
