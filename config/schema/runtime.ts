/**
 * `machine.runtime`: the built-in container runtime.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { absolutePath } from "./primitives.ts";

const ContainerdSchema = mapping({
  enabled: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description("Run the built-in `containerd` service."),
    ),
    true,
  ),
  socket: v.optional(
    v.pipe(absolutePath("socket path"), v.description("containerd's gRPC socket.")),
    "/run/containerd/containerd.sock",
  ),
  config_extra: v.optional(
    v.pipe(
      v.string("expected TOML text"),
      v.description("TOML appended verbatim to the generated containerd config."),
      v.examples(['[plugins."io.containerd.grpc.v1.cri"]\nenable_cdi = true\n']),
    ),
    "",
  ),
});

/** `machine.runtime`. */
export const RuntimeSchema = mapping({
  containerd: v.optional(
    v.pipe(ContainerdSchema, v.description("The containerd daemon machined supervises.")),
    {},
  ),
});

/** A parsed `machine.runtime`. */
export type RuntimeConfig = v.InferOutput<typeof RuntimeSchema>;
