/**
 * Observes the container runtime through its CRI API and publishes
 * RuntimeStatus: RuntimeReady and NetworkReady, name and version, the last
 * error and probe time. Inputs: the containerd ServiceSpec (for the socket)
 * and ServiceStatus; a change of the service's state re-runs it at once, so
 * the runtime reads not-ready the moment containerd stops running. While it
 * runs, it probes every `intervalMs`. Output: RuntimeStatus.
 */
import { createCriClient, type CriClient } from "../../cri/mod.ts";
import {
  type MachineController,
  RUNTIME_STATUS,
  RUNTIME_STATUS_ID,
  type RuntimeStatusSpec,
  SERVICE_SPEC,
  SERVICE_STATUS,
} from "../../resources/mod.ts";
import { CONTAINERD_SERVICE_ID } from "./service_spec_controller.ts";

/** Options of {@link runtimeStatusController}. */
export interface RuntimeStatusControllerOptions {
  /** Time between probes while containerd runs. @default 5000 */
  readonly intervalMs?: number;
  /** Deadline of each CRI call. @default 2000 */
  readonly timeoutMs?: number;
  /** Makes a client for one probe (closed after it). @default createCriClient */
  readonly cri?: (socket: string) => CriClient;
}

/** Probes CRI → RuntimeStatus. */
export function runtimeStatusController(
  options: RuntimeStatusControllerOptions = {},
): MachineController {
  const intervalMs = options.intervalMs ?? 5000;
  const makeClient = options.cri ??
    ((socket: string) => createCriClient(socket, { timeoutMs: options.timeoutMs ?? 2000 }));
  return {
    name: "runtime.RuntimeStatusController",
    inputs: [
      { type: SERVICE_SPEC, kind: "weak", namespace: "runtime", id: CONTAINERD_SERVICE_ID },
      { type: SERVICE_STATUS, kind: "weak", namespace: "runtime", id: CONTAINERD_SERVICE_ID },
    ],
    outputs: [{ type: RUNTIME_STATUS, kind: "exclusive" }],
    async reconcile(ctx) {
      const spec = ctx.find(SERVICE_SPEC, "runtime", CONTAINERD_SERVICE_ID)?.spec;
      const probe = spec?.health?.probe;
      if (!spec || probe?.kind !== "cri") return;
      const ptr = { type: RUNTIME_STATUS, namespace: "runtime", id: RUNTIME_STATUS_ID } as const;
      const previous = ctx.find(RUNTIME_STATUS, "runtime", RUNTIME_STATUS_ID)?.spec;
      const service = ctx.find(SERVICE_STATUS, "runtime", CONTAINERD_SERVICE_ID)?.spec;
      const now = ctx.clock.now();
      if (!service || (service.state !== "running" && service.state !== "starting")) {
        await ctx.apply(ptr, {
          ...emptyStatus(probe.socket, previous),
          lastError: `containerd is ${service?.state ?? "not started"}`,
          lastProbe: previous?.lastProbe ?? 0,
        });
        return;
      }
      const client = makeClient(probe.socket);
      try {
        await ctx.apply(ptr, await probeRuntime(client, now, previous));
      } finally {
        client.close();
      }
      ctx.requeueAfter(intervalMs);
    },
  };
}

function emptyStatus(socket: string, previous?: RuntimeStatusSpec): RuntimeStatusSpec {
  return {
    ready: false,
    networkReady: false,
    runtimeName: previous?.runtimeName ?? "",
    runtimeVersion: previous?.runtimeVersion ?? "",
    runtimeApiVersion: previous?.runtimeApiVersion ?? "",
    socket,
    lastError: "",
    lastProbe: 0,
    lastAnswer: previous?.lastAnswer ?? 0,
  };
}

/** One probe: Status (and Version) over CRI, mapped to a RuntimeStatus. Never throws. */
export async function probeRuntime(
  client: CriClient,
  now: number,
  previous?: RuntimeStatusSpec,
): Promise<RuntimeStatusSpec> {
  const base = { ...emptyStatus(client.socket, previous), lastProbe: now };
  try {
    const conditions = await client.status();
    const version = await client.version();
    const runtime = conditions.find((c) => c.type === "RuntimeReady");
    const network = conditions.find((c) => c.type === "NetworkReady");
    const ready = runtime?.status === true;
    const lastError = ready
      ? ""
      : runtime
      ? `RuntimeReady is false: ${[runtime.reason, runtime.message].filter(Boolean).join(": ")}`
      : "the runtime reports no RuntimeReady condition";
    return {
      ...base,
      ready,
      networkReady: network?.status === true,
      runtimeName: version.runtimeName,
      runtimeVersion: version.runtimeVersion,
      runtimeApiVersion: version.runtimeApiVersion,
      lastError,
      lastAnswer: now,
    };
  } catch (e) {
    return { ...base, lastError: e instanceof Error ? e.message : String(e) };
  }
}
