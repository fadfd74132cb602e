/**
 * The read-only windows onto the node's moving parts: containers and images
 * from containerd's CRI (the socket the runtime probe uses, from
 * RuntimeStatus), the Prometheus exposition, and the controller graph. Each
 * dependency is optional (dev mode, tests): an RPC without its dependency
 * answers Unimplemented.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { UnimplementedError } from "../errors/mod.ts";
import { unanswered, withCri } from "./cri_call.ts";
import {
  ContainersResponseSchema,
  ControllerGraphResponseSchema,
  ImagesResponseSchema,
  type MachineService,
  MetricsResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import type { CriClient } from "../../cri/mod.ts";
import type { DependencyGraph } from "../../runtime/mod.ts";
import type { MachineStore } from "../../resources/mod.ts";

/** The optional dependencies of these handlers. */
export interface ObservabilityDeps {
  /** Makes a CRI client for a socket (closed after each call) for Containers and Images. */
  readonly cri?: (socket: string) => CriClient;
  /** The Prometheus text exposition (Metrics). */
  readonly metrics?: { render(): Promise<string> };
  /** The controller runtime's declared graph (ControllerGraph). */
  readonly graph?: () => DependencyGraph;
}

type ObservabilityMethods = "containers" | "images" | "metrics" | "controllerGraph";

/** The handlers of the RPCs backed by {@link ObservabilityDeps}. */
export function createObservabilityHandlers(
  deps: ObservabilityDeps & { readonly store: MachineStore },
): Pick<ServiceImpl<typeof MachineService>, ObservabilityMethods> {
  const cri = <T>(
    rpc: string,
    signal: AbortSignal,
    fn: (c: CriClient, signal: AbortSignal) => Promise<T>,
  ) => withCri(deps, rpc, { timeoutMs: 10_000, signal }, fn, unanswered(rpc));
  return {
    async containers(_req, ctx) {
      const { socket, value } = await cri("Containers", ctx.signal, async (c, signal) => {
        return [await c.listPods(signal), await c.listContainers(signal)] as const;
      });
      const [pods, containers] = value;
      return create(ContainersResponseSchema, {
        socket,
        pods: pods.map((p) => ({ ...p, created: timestampFromMs(p.createdAt) })),
        containers: containers.map((c) => ({ ...c, created: timestampFromMs(c.createdAt) })),
      });
    },

    async images(_req, ctx) {
      const { socket, value } = await cri(
        "Images",
        ctx.signal,
        (c, signal) => c.listImages(signal),
      );
      return create(ImagesResponseSchema, {
        socket,
        images: value.map((i) => ({
          ...i,
          tags: [...i.tags],
          digests: [...i.digests],
          sizeBytes: BigInt(i.sizeBytes),
        })),
      });
    },

    async metrics() {
      const source = need(deps.metrics, "Metrics", "a metrics registry");
      return create(MetricsResponseSchema, { text: await source.render() });
    },

    controllerGraph() {
      const graph = need(deps.graph, "ControllerGraph", "a controller runtime")();
      const controllers = [...graph.controllers].sort((a, b) => a.name < b.name ? -1 : 1);
      return create(ControllerGraphResponseSchema, { controllers });
    },
  };
}

/** @throws UnimplementedError when machined runs without `what`. */
function need<T>(dep: T | undefined, rpc: string, what: string): T {
  if (dep !== undefined) return dep;
  throw new UnimplementedError(
    `${rpc} is not available: this machined runs without ${what}`,
    { context: { rpc, missing: what } },
  );
}
