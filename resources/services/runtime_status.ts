/**
 * RuntimeStatus: the container runtime (containerd) as seen through its CRI
 * API: whether it reports RuntimeReady and NetworkReady, what it is, and when
 * it last answered. Turns not-ready at once when the containerd service stops.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

export const RUNTIME_STATUS = "RuntimeStatus";
/** The single RuntimeStatus's id. */
export const RUNTIME_STATUS_ID = "containerd";

export interface RuntimeStatusSpec {
  /** The CRI RuntimeReady condition is true. */
  readonly ready: boolean;
  /** The CRI NetworkReady condition is true (false until a CNI is configured). */
  readonly networkReady: boolean;
  /** e.g. `containerd`; empty until the first successful probe. */
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
  readonly socket: string;
  /** Why it is not ready (a failed call, a false condition's reason), or empty. */
  readonly lastError: string;
  /** Epoch ms of the last probe, 0 before the first. */
  readonly lastProbe: number;
  /** Epoch ms of the last probe that got an answer, 0 before the first. */
  readonly lastAnswer: number;
}

export const runtimeStatusDescriptor: ResourceDescriptor<typeof RUNTIME_STATUS, RuntimeStatusSpec> =
  {
    type: RUNTIME_STATUS,
    namespace: "runtime",
    aliases: ["runtimestatus", "runtimestatuses", "runtime", "cri"],
    description: "Readiness of the container runtime via its CRI API",
    columns: [
      { header: "READY", value: (s) => String(s.ready) },
      { header: "NETWORK", value: (s) => String(s.networkReady) },
      { header: "RUNTIME", value: (s) => `${s.runtimeName} ${s.runtimeVersion}`.trim() },
      { header: "ERROR", value: (s) => s.lastError },
    ],
  };
