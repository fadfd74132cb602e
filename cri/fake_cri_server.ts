/**
 * A CRI RuntimeService server on a Unix socket, for tests: it speaks the same
 * gRPC subset as containerd, and a test sets the conditions it reports, makes
 * it fail, or makes it hang so the client's deadline is exercised.
 */
import http2 from "node:http2";
import type { Http2Session } from "node:http2";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { listenUnixStream } from "../platform/unix_stream/mod.ts";
import {
  ContainerState,
  ImageService,
  PodSandboxState,
  RuntimeService,
} from "./gen/runtime/v1/api_pb.ts";
import type { CriCondition, CriContainer, CriImage, CriPod, CriVersion } from "./cri_client.ts";

/** A running fake; `close()` it. */
export interface FakeCriServer {
  readonly socket: string;
  /** Conditions the next Status reports. */
  conditions: CriCondition[];
  version: CriVersion;
  /** What ListPodSandbox, ListContainers and ListImages answer. */
  pods: CriPod[];
  containers: CriContainer[];
  images: CriImage[];
  /** What PullImage can fetch, by reference; a pull adds the image to `images`. */
  pullable: Map<string, CriImage>;
  /** When set, every call fails with this gRPC code. */
  failWith?: Code;
  /** When true, calls never answer (until the client's deadline). */
  hang: boolean;
  /** Calls served so far, by method. */
  readonly calls: {
    Version: number;
    Status: number;
    ListPodSandbox: number;
    ListContainers: number;
    ListImages: number;
    PullImage: number;
  };
  close(): Promise<void>;
}

/** The conditions of a healthy runtime. */
export function readyConditions(): CriCondition[] {
  return [
    { type: "RuntimeReady", status: true, reason: "", message: "" },
    { type: "NetworkReady", status: true, reason: "", message: "" },
  ];
}

/** Starts a fake CRI server listening on `socket`. */
export function startFakeCriServer(socket: string): Promise<FakeCriServer> {
  const hangs = new Set<() => void>();
  const fake: FakeCriServer = {
    socket,
    conditions: readyConditions(),
    version: { runtimeName: "fake", runtimeVersion: "0.0.1", runtimeApiVersion: "v1" },
    pods: [],
    containers: [],
    images: [],
    pullable: new Map(),
    hang: false,
    calls: {
      Version: 0,
      Status: 0,
      ListPodSandbox: 0,
      ListContainers: 0,
      ListImages: 0,
      PullImage: 0,
    },
    close: () => Promise.resolve(),
  };
  const gate = (signal: AbortSignal) => gateCall(fake, hangs, signal);
  const handler = connectNodeAdapter({
    grpc: true,
    connect: false,
    grpcWeb: false,
    routes: (router) => {
      fakeRoutes(router, fake, gate);
    },
  });
  const sessions = new Set<Http2Session>();
  const server = http2.createServer({}, handler);
  server.on("session", (s: Http2Session) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
    s.on("error", () => {});
  });
  // Deno's Unix socket, not node:net's (which closes descriptors twice: platform/unix_stream).
  const listener = listenUnixStream(socket, (stream) => server.emit("connection", stream));
  let closing: Promise<void> | undefined;
  fake.close = () => {
    closing ??= (async () => {
      for (const release of [...hangs]) release();
      await listener.close();
      for (const s of sessions) s.destroy();
      await Deno.remove(socket).catch(() => {});
    })();
    return closing;
  };
  return Promise.resolve(fake);
}

/**
 * What every call does first: fail with `failWith` when set, or hang (until released
 * or the call's signal aborts) when `hang` is.
 */
async function gateCall(
  fake: FakeCriServer,
  hangs: Set<() => void>,
  signal: AbortSignal,
): Promise<void> {
  if (fake.failWith !== undefined) throw new ConnectError("injected failure", fake.failWith);
  if (fake.hang) {
    await new Promise<void>((resolve) => {
      const done = () => {
        hangs.delete(done);
        resolve();
      };
      hangs.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
    throw new ConnectError("hung call released", Code.Unavailable);
  }
}

/** ImageService and RuntimeService answering from `fake`, each call counted and gated. */
function fakeRoutes(
  router: ConnectRouter,
  fake: FakeCriServer,
  gate: (signal: AbortSignal) => Promise<void>,
): void {
  router.service(ImageService, {
    async listImages(_req, ctx) {
      fake.calls.ListImages++;
      await gate(ctx.signal);
      return {
        images: fake.images.map((i) => ({
          id: i.id,
          repoTags: [...i.tags],
          repoDigests: [...i.digests],
          size: BigInt(i.sizeBytes),
          pinned: i.pinned,
        })),
      };
    },
    async pullImage(req, ctx) {
      fake.calls.PullImage++;
      await gate(ctx.signal);
      const ref = req.image?.image ?? "";
      const image = fake.pullable.get(ref);
      if (!image) {
        // containerd's words for a reference its resolver cannot find.
        throw new ConnectError(`failed to resolve reference "${ref}": not found`, Code.NotFound);
      }
      if (!fake.images.some((i) => i.id === image.id)) fake.images.push(image);
      return { imageRef: image.id };
    },
  });
  router.service(RuntimeService, {
    async version(_req, ctx) {
      fake.calls.Version++;
      await gate(ctx.signal);
      return { version: "0.1.0", ...fake.version };
    },
    async status(_req, ctx) {
      fake.calls.Status++;
      await gate(ctx.signal);
      return { status: { conditions: fake.conditions }, info: {} };
    },
    async listPodSandbox(_req, ctx) {
      fake.calls.ListPodSandbox++;
      await gate(ctx.signal);
      return { items: fake.pods.map(podMessage) };
    },
    async listContainers(_req, ctx) {
      fake.calls.ListContainers++;
      await gate(ctx.signal);
      return { containers: fake.containers.map(containerMessage) };
    },
  });
}

const ms = (epochMs: number) => BigInt(epochMs) * 1_000_000n;

function podMessage(p: CriPod) {
  return {
    id: p.id,
    metadata: { name: p.name, namespace: p.namespace, uid: p.uid, attempt: 0 },
    state: p.state === "ready" ? PodSandboxState.SANDBOX_READY : PodSandboxState.SANDBOX_NOTREADY,
    createdAt: ms(p.createdAt),
    labels: { ...p.labels },
    runtimeHandler: p.runtimeHandler,
  };
}

const STATES = {
  created: ContainerState.CONTAINER_CREATED,
  running: ContainerState.CONTAINER_RUNNING,
  exited: ContainerState.CONTAINER_EXITED,
  unknown: ContainerState.CONTAINER_UNKNOWN,
} as const;

function containerMessage(c: CriContainer) {
  return {
    id: c.id,
    podSandboxId: c.podId,
    metadata: { name: c.name, attempt: c.attempt },
    image: { image: c.image },
    imageRef: c.imageRef,
    state: STATES[c.state],
    createdAt: ms(c.createdAt),
    labels: { ...c.labels },
  };
}

/** A pod, a container in it and an image, as a fake runtime would list them. */
export const SAMPLE_LISTING: {
  pods: CriPod[];
  containers: CriContainer[];
  images: CriImage[];
} = {
  pods: [{
    id: "p1",
    name: "web",
    namespace: "default",
    uid: "u1",
    state: "ready" as const,
    createdAt: 1_700_000_000_123,
    labels: { app: "web" },
    runtimeHandler: "runc",
  }],
  containers: [
    {
      id: "c2",
      podId: "p1",
      name: "sidecar",
      attempt: 1,
      image: "docker.io/library/busybox:1",
      imageRef: "sha256:bb",
      state: "exited" as const,
      createdAt: 1_700_000_001_000,
      labels: {},
    },
    {
      id: "c1",
      podId: "p1",
      name: "web",
      attempt: 0,
      image: "docker.io/library/nginx:1",
      imageRef: "sha256:aa",
      state: "running" as const,
      createdAt: 1_700_000_000_500,
      labels: { tier: "front" },
    },
  ],
  images: [{
    id: "sha256:aa",
    tags: ["docker.io/library/nginx:1"],
    digests: ["docker.io/library/nginx@sha256:aa"],
    sizeBytes: 73_000_000,
    pinned: false,
  }],
};
