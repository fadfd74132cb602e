/**
 * Test fixtures for the supervisor: a fresh store, fake clock, fake process
 * and cgroup backends, and a helper to write ServiceSpec resources the way
 * ServiceSpecController would.
 * @module
 */
import { EventBus } from "../events/mod.ts";
import { FakeCgroupBackend } from "../platform/cgroup/mod.ts";
import { FakeProcessBackend } from "../platform/process/mod.ts";
import {
  type MachineStore,
  type ResourceSpecs,
  SERVICE_SPEC,
  SERVICE_STATUS,
  type ServiceSpecSpec,
  type ServiceStatusSpec,
} from "../resources/mod.ts";
import { FakeClock, Store } from "../runtime/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import type { Prober } from "./probes.ts";
import { createSupervisor, type Supervisor, type SupervisorDeps } from "./supervisor.ts";

/** A service spec with test defaults (restart always, 1 s grace, no health). */
export function serviceSpec(overrides: Partial<ServiceSpecSpec> = {}): ServiceSpecSpec {
  return {
    command: ["/bin/svc"],
    env: {},
    cwd: "/",
    user: Deno.uid() ?? 0,
    group: Deno.gid() ?? 0,
    dependsOn: [],
    restart: "always",
    stopGraceMs: 1000,
    onDependencyRestart: "restart",
    limits: {},
    files: [],
    dirs: [],
    builtin: false,
    ...overrides,
  };
}

/** Everything a supervisor test needs. */
export interface SupervisorFixture {
  store: MachineStore;
  clock: FakeClock;
  process: FakeProcessBackend;
  cgroups: FakeCgroupBackend;
  events: EventBus;
  supervisor: Supervisor;
  /** Creates or replaces a ServiceSpec. */
  setSpec(id: string, spec: ServiceSpecSpec): void;
  removeSpec(id: string): void;
  /** Waits for `id`'s status to satisfy `pred`. */
  status(
    id: string,
    pred: (s: ServiceStatusSpec) => boolean,
    timeoutMs?: number,
  ): Promise<ServiceStatusSpec>;
  close(): Promise<void>;
}

/** Builds a fixture; `close()` it at the end of the test. */
export function supervisorFixture(
  options: { prober?: Prober } & Partial<SupervisorDeps> = {},
): SupervisorFixture {
  const clock = new FakeClock();
  const store: MachineStore = new Store<ResourceSpecs>({ clock });
  const process = new FakeProcessBackend({ clock });
  const cgroups = new FakeCgroupBackend();
  const events = new EventBus();
  const supervisor = createSupervisor({
    store,
    process,
    cgroups,
    clock,
    events,
    prober: options.prober ?? (() => Promise.resolve()),
    backoff: { initialMs: 100, maxMs: 400, factor: 2 },
    resetAfterMs: 5000,
    ...options,
  });
  const owner = "test";
  return {
    store,
    clock,
    process,
    cgroups,
    events,
    supervisor,
    setSpec(id, spec) {
      store.modify({ type: SERVICE_SPEC, namespace: "runtime", id }, owner, () => spec);
    },
    removeSpec(id) {
      const ptr = { type: SERVICE_SPEC, namespace: "runtime", id } as const;
      if (store.teardown(ptr, owner)) store.destroy(ptr, owner);
    },
    async status(id, pred, timeoutMs = 3000) {
      const r = await waitForResource(
        store,
        SERVICE_STATUS,
        (r) => r.metadata.id === id && pred(r.spec),
        timeoutMs,
      );
      return r.spec;
    },
    async close() {
      await supervisor.close();
      await process.close();
    },
  };
}
