/**
 * The CRI `runtime.v1` subset machined speaks to containerd: the client over its socket
 * (status, version, pods, containers, images) and containerd's generated config. The
 * generated protobuf code (cri/gen) is never edited; test support (a fake CRI server) is
 * in cri/testing.ts.
 *
 * @example
 * ```ts
 * import { createCriClient } from "./cri/mod.ts";
 * const cri = createCriClient("/run/containerd/containerd.sock");
 * console.log((await cri.version()).runtimeName);
 * ```
 * @module
 */
export {
  containerdConfigToml,
  type ContainerdPaths,
  DEFAULT_CONTAINERD_PATHS,
} from "./containerd_config.ts";
export {
  createCriClient,
  CRI_API_VERSION,
  type CriClient,
  type CriClientOptions,
  type CriCondition,
  type CriContainer,
  CriError,
  type CriImage,
  type CriPod,
  type CriVersion,
} from "./cri_client.ts";
