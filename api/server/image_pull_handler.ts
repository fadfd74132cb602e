/**
 * ImagePull: containerd's CRI pulls an image into its store. containerd, not
 * machined, speaks to the registry, and verifies it against the trust bundle
 * machined starts it with (`SSL_CERT_FILE`: Debian's roots plus
 * `machine.trusted_roots`). A pull downloads and unpacks layers onto /var, so
 * it has a budget: one pull at a time on the node and {@link PULL_TIMEOUT_MS}
 * each; the reference is bounded and checked before containerd sees it.
 * @module
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  DeadlineExceededError,
  FailedPreconditionError,
  InvalidArgumentError,
  ResourceExhaustedError,
} from "../errors/mod.ts";
import { ImagePullResponseSchema, type MachineService } from "../gen/machined/v1/machine_pb.ts";
import { type CriCallDeps, unanswered, withCri } from "./cri_call.ts";

/** How long one pull may take, download and unpack. */
export const PULL_TIMEOUT_MS = 10 * 60_000;
/** Pulls in progress on the node, every client together. */
export const PULLS_IN_FLIGHT = 1;
/** The longest image reference accepted, in bytes. */
export const MAX_IMAGE_REF_BYTES = 512;

/** Why `ref` is not an image reference this node will hand to containerd, or undefined. */
export function imageRefProblem(ref: string): string | undefined {
  if (ref === "") return "ImagePull needs an image reference";
  if (new TextEncoder().encode(ref).length > MAX_IMAGE_REF_BYTES) {
    return `the image reference is longer than ${MAX_IMAGE_REF_BYTES} bytes`;
  }
  // deno-lint-ignore no-control-regex
  if (/[\s\x00-\x1f\x7f]/.test(ref)) {
    return "the image reference holds spaces or control characters";
  }
  return undefined;
}

/** The ImagePull handler; one per API server (it holds the in-flight count). */
export function createImagePullHandler(
  deps: CriCallDeps,
  o: { timeoutMs?: number } = {},
): Pick<ServiceImpl<typeof MachineService>, "imagePull"> {
  let inFlight = 0;
  const timeoutMs = o.timeoutMs ?? PULL_TIMEOUT_MS;
  return {
    async imagePull(req, ctx: HandlerContext) {
      const problem = imageRefProblem(req.image);
      if (problem) throw new InvalidArgumentError(problem, { context: { rpc: "ImagePull" } });
      if (inFlight >= PULLS_IN_FLIGHT) {
        throw new ResourceExhaustedError(
          `another ImagePull is in progress (${PULLS_IN_FLIGHT} at a time on this node); retry when it ends`,
          { context: { rpc: "ImagePull", budget: "pulls_in_flight" } },
        );
      }
      inFlight++;
      try {
        const { socket, value } = await withCri(
          deps,
          "ImagePull",
          { timeoutMs, signal: ctx.signal },
          (c, signal) => c.pullImage(req.image, { timeoutMs, signal }),
          pullFailed(req.image, timeoutMs),
        );
        return create(ImagePullResponseSchema, { imageId: value, socket });
      } finally {
        inFlight--;
      }
    },
  };
}

/**
 * The refusal of a failed pull: past the budget, DeadlineExceeded; containerd
 * unreachable, Unavailable; containerd answered that it could not pull (an
 * untrusted or unknown registry, no such image), FailedPrecondition with its words.
 */
function pullFailed(image: string, timeoutMs: number) {
  const didNotAnswer = unanswered("ImagePull");
  return (e: unknown, socket: string, runtimeError: string): Error => {
    const cause = (e as { cause?: unknown }).cause;
    const code = cause instanceof ConnectError ? cause.code : undefined;
    if (code === Code.DeadlineExceeded || code === Code.Canceled) {
      return new DeadlineExceededError(
        `ImagePull of "${image}" did not finish within ${timeoutMs / 1000} s`,
        { context: { rpc: "ImagePull", image, timeoutMs }, cause: e },
      );
    }
    if (code === undefined || code === Code.Unavailable) {
      return didNotAnswer(e, socket, runtimeError);
    }
    const said = cause instanceof ConnectError ? cause.rawMessage : String(e);
    return new FailedPreconditionError(`containerd could not pull "${image}": ${said}`, {
      context: { rpc: "ImagePull", image, socket },
      cause: e,
    });
  };
}
