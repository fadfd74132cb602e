/**
 * The CRI listings (pod sandboxes, containers, images) as plain data: the
 * generated messages carry protobuf internals and nanosecond bigints, which
 * the API and the CLI should not have to know about.
 */
import {
  type Container,
  ContainerState,
  type Image,
  type ListContainersResponse,
  type ListImagesResponse,
  type ListPodSandboxResponse,
  type PodSandbox,
  PodSandboxState,
} from "./gen/runtime/v1/api_pb.ts";

/** A pod sandbox, from `ListPodSandbox`. */
export interface CriPod {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly state: "ready" | "notready";
  /** Epoch ms. */
  readonly createdAt: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly runtimeHandler: string;
}

/** A container, from `ListContainers`. */
export interface CriContainer {
  readonly id: string;
  readonly podId: string;
  readonly name: string;
  readonly attempt: number;
  readonly image: string;
  readonly imageRef: string;
  readonly state: "created" | "running" | "exited" | "unknown";
  /** Epoch ms. */
  readonly createdAt: number;
  readonly labels: Readonly<Record<string, string>>;
}

/** An image, from `ImageService.ListImages`. */
export interface CriImage {
  readonly id: string;
  readonly tags: readonly string[];
  readonly digests: readonly string[];
  readonly sizeBytes: number;
  readonly pinned: boolean;
}

const CONTAINER_STATES: Record<ContainerState, CriContainer["state"]> = {
  [ContainerState.CONTAINER_CREATED]: "created",
  [ContainerState.CONTAINER_RUNNING]: "running",
  [ContainerState.CONTAINER_EXITED]: "exited",
  [ContainerState.CONTAINER_UNKNOWN]: "unknown",
};

const byId = <T extends { id: string }>(a: T, b: T) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
const nsToMs = (ns: bigint) => Number(ns / 1_000_000n);

function pod(p: PodSandbox): CriPod {
  return {
    id: p.id,
    name: p.metadata?.name ?? "",
    namespace: p.metadata?.namespace ?? "",
    uid: p.metadata?.uid ?? "",
    state: p.state === PodSandboxState.SANDBOX_READY ? "ready" : "notready",
    createdAt: nsToMs(p.createdAt),
    labels: { ...p.labels },
    runtimeHandler: p.runtimeHandler,
  };
}

function container(c: Container): CriContainer {
  return {
    id: c.id,
    podId: c.podSandboxId,
    name: c.metadata?.name ?? "",
    attempt: c.metadata?.attempt ?? 0,
    image: c.image?.image ?? "",
    imageRef: c.imageRef,
    state: CONTAINER_STATES[c.state] ?? "unknown",
    createdAt: nsToMs(c.createdAt),
    labels: { ...c.labels },
  };
}

function image(i: Image): CriImage {
  return {
    id: i.id,
    tags: [...i.repoTags],
    digests: [...i.repoDigests],
    sizeBytes: Number(i.size),
    pinned: i.pinned,
  };
}

/** Response → plain data, each list ordered by id. */
export const listing = {
  pods: (r: ListPodSandboxResponse): CriPod[] => r.items.map(pod).sort(byId),
  containers: (r: ListContainersResponse): CriContainer[] => r.containers.map(container).sort(byId),
  images: (r: ListImagesResponse): CriImage[] => r.images.map(image).sort(byId),
};
