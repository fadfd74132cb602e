/**
 * machined's side of the API benches (bench/api_bench.ts, bench/watch_bench.ts):
 * the internal server over a seeded store, and the updates whose delivery the
 * client times. Shared so both suites measure the same server and the same
 * events.
 */
import type { CertificateAuthority } from "../pki/mod.ts";
import type { MachineStore } from "../resources/mod.ts";
import {
  createClientConfigIssuer,
  type InternalApiServer,
  startInternalApiServer,
} from "../api/server/mod.ts";
import { RecordingActions, seededStore } from "../api/testing.ts";
import { EventBus } from "../events/mod.ts";

/** The internal server on `socketPath` over a fresh seeded store, with recording actions. */
export async function startBenchServer(
  socketPath: string,
  ca: CertificateAuthority,
): Promise<{ store: MachineStore; server: InternalApiServer }> {
  const store = seededStore();
  const server = await startInternalApiServer({
    socketPath,
    deps: {
      store,
      actions: new RecordingActions(),
      events: new EventBus(),
      clientConfigs: createClientConfigIssuer(ca, () => ["127.0.0.1"]),
    },
  });
  return { store, server };
}

/**
 * Commits `n` updates of one ControllerStatus, `ms` apart, each carrying its
 * commit time (performance.timeOrigin + now, comparable across processes) in
 * `lastError`, so that a watching client can take the delivery latency.
 */
export async function commitTicks(store: MachineStore, n: number, ms: number): Promise<void> {
  const ptr = {
    type: "ControllerStatus" as const,
    namespace: "runtime",
    id: "time.SyncController",
  };
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, ms));
    await store.modify(ptr, "test", (s) => ({
      ...s!,
      lastError: String(performance.timeOrigin + performance.now()),
    }));
  }
}
