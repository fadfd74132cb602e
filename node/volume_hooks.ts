/**
 * What happens when the node's volumes come up: STATE mounted → the config is
 * persisted there (or loaded from there); EPHEMERAL mounted at /var → services
 * held by the start gate (node/var_gate.ts) may start, and their logs are also
 * written to /var/log. Follows MountStatus through a store watch.
 */
import { isStateMounted, MOUNT_STATUS } from "../resources/mod.ts";
import type { Supervisor } from "../supervisor/mod.ts";
import type { ConfigKeeper } from "./config_keeper.ts";
import type { Machined } from "./machined.ts";

/** Starts following MountStatus; returns a function that stops it. */
export function followVolumes(
  machined: Machined,
  deps: { config: ConfigKeeper; supervisor: Supervisor },
): () => void {
  const abort = new AbortController();
  const done = new Set<string>();
  (async () => {
    for await (const ev of machined.store.watch(MOUNT_STATUS, { signal: abort.signal })) {
      if (ev.kind !== "created" && ev.kind !== "updated") continue;
      const { spec, metadata } = ev.resource;
      if (!spec.mounted || spec.phase !== "ready" || done.has(metadata.id)) continue;
      done.add(metadata.id);
      try {
        if (isStateMounted(spec)) await deps.config.stateMounted(spec.target);
        else if (spec.volume === "EPHEMERAL") {
          deps.supervisor.recheck(); // services held until /var is mounted may start
          await Deno.mkdir(`${spec.target}/log`, { recursive: true });
          await deps.supervisor.setLogDirectory(`${spec.target}/log`);
        }
        machined.events.emit("task", `volume ${spec.volume}`, "ready", `mounted at ${spec.target}`);
      } catch (e) {
        machined.logger.error("volumes", `after mounting ${spec.target}`, { error: e });
      }
    }
  })();
  return () => abort.abort();
}
