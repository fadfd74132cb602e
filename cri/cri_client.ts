/**
 * A CRI RuntimeService and ImageService client over containerd's Unix socket: gRPC on one
 * HTTP/2 connection that is re-established on demand after containerd
 * restarts, with a deadline on every call so a wedged runtime reads as
 * "not answering" instead of hanging the probe.
 */
import { type Client, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { ImageService, RuntimeService } from "./gen/runtime/v1/api_pb.ts";
import { type CriContainer, type CriImage, type CriPod, listing } from "./cri_listing.ts";
import { connectUnixStream } from "../platform/unix_stream/mod.ts";

export type { CriContainer, CriImage, CriPod } from "./cri_listing.ts";

/** The runtime's identity, from `RuntimeService.Version`. */
export interface CriVersion {
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

/** One runtime condition, from `RuntimeService.Status`. */
export interface CriCondition {
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

/** What a CRI client can do; {@link createCriClient} is the real one. */
export interface CriClient {
  /** The socket it talks to. */
  readonly socket: string;
  /** @throws CriError when the call fails or exceeds its deadline. */
  version(signal?: AbortSignal): Promise<CriVersion>;
  /** @throws CriError when the call fails or exceeds its deadline. */
  status(signal?: AbortSignal): Promise<CriCondition[]>;
  /** Every pod sandbox (`ListPodSandbox`). @throws CriError */
  listPods(signal?: AbortSignal): Promise<CriPod[]>;
  /** Every container (`ListContainers`). @throws CriError */
  listContainers(signal?: AbortSignal): Promise<CriContainer[]>;
  /** Every image (`ImageService.ListImages`). @throws CriError */
  listImages(signal?: AbortSignal): Promise<CriImage[]>;
  /**
   * Pulls `image` into the CRI image store (`ImageService.PullImage`) and answers the image's
   * id. A pull downloads and unpacks layers, so it takes its own deadline, not the client's
   * per-call one. @throws CriError
   */
  pullImage(image: string, o: { timeoutMs: number; signal?: AbortSignal }): Promise<string>;
  /** Drops the connection; later calls reconnect. */
  close(): void;
}

/** A failed CRI call, with the method, the socket and the gRPC error as cause. */
export class CriError extends Error {
  override name = "CriError";
  constructor(
    readonly method: string,
    readonly socket: string,
    override readonly cause: unknown,
  ) {
    super(
      `CRI ${method} on "${socket}" failed: ${
        cause instanceof ConnectError ? cause.rawMessage : String(cause)
      }`,
      { cause },
    );
  }
}

/** Options of {@link createCriClient}. */
export interface CriClientOptions {
  /** Deadline of each call in ms. @default 2000 */
  readonly timeoutMs?: number;
}

/** The CRI API version machined asks for. */
export const CRI_API_VERSION = "v1";

/** A client for the CRI runtime service listening on the Unix socket `socket`. */
export function createCriClient(socket: string, options: CriClientOptions = {}): CriClient {
  const timeoutMs = options.timeoutMs ?? 2000;
  const baseUrl = "http://localhost";
  let manager: Http2SessionManager | undefined;
  let clients: Clients | undefined;
  const connect = () => {
    if (!clients) {
      manager = new Http2SessionManager(baseUrl, { idleConnectionTimeoutMs: 60_000 }, {
        createConnection: () => connectUnixStream(socket),
      });
      const transport = createGrpcTransport({ baseUrl, sessionManager: manager });
      clients = {
        runtime: createClient(RuntimeService, transport),
        images: createClient(ImageService, transport),
      };
    }
    return clients;
  };
  // A failed call may leave a dead session behind; start over on the next call.
  const reset = () => {
    manager?.abort();
    manager = undefined;
    clients = undefined;
  };
  const call = async <T>(method: string, fn: (c: Clients) => Promise<T>) => {
    try {
      return await fn(connect());
    } catch (e) {
      reset();
      throw new CriError(method, socket, e);
    }
  };
  const { pods, containers, images } = listing;
  return {
    socket,
    version: (signal) =>
      call("Version", async (c) => {
        const r = await c.runtime.version({ version: CRI_API_VERSION }, { timeoutMs, signal });
        return {
          runtimeName: r.runtimeName,
          runtimeVersion: r.runtimeVersion,
          runtimeApiVersion: r.runtimeApiVersion,
        };
      }),
    status: (signal) =>
      call("Status", async (c) => {
        const r = await c.runtime.status({ verbose: false }, { timeoutMs, signal });
        return (r.status?.conditions ?? []).map((x) => ({
          type: x.type,
          status: x.status,
          reason: x.reason,
          message: x.message,
        }));
      }),
    listPods: (signal) =>
      call(
        "ListPodSandbox",
        async (c) => pods(await c.runtime.listPodSandbox({}, { timeoutMs, signal })),
      ),
    listContainers: (signal) =>
      call(
        "ListContainers",
        async (c) => containers(await c.runtime.listContainers({}, { timeoutMs, signal })),
      ),
    listImages: (signal) =>
      call("ListImages", async (c) => images(await c.images.listImages({}, { timeoutMs, signal }))),
    pullImage: (image, o) =>
      call("PullImage", async (c) => (await c.images.pullImage({ image: { image } }, o)).imageRef),
    close: reset,
  };
}

interface Clients {
  runtime: Client<typeof RuntimeService>;
  images: Client<typeof ImageService>;
}
