/**
 * One call to containerd's CRI on the socket RuntimeStatus names: the client
 * is made for the call and closed after it, the call gets its own deadline,
 * and a node without containerd or without a CRI client refuses with the
 * reason. Shared by the observability handlers (Containers, Images) and
 * ImagePull.
 * @module
 */
import { FailedPreconditionError, UnavailableError, UnimplementedError } from "../errors/mod.ts";
import type { CriClient } from "../../cri/mod.ts";
import { type MachineStore, RUNTIME_STATUS, RUNTIME_STATUS_ID } from "../../resources/mod.ts";

/** What a CRI call needs from the server's dependencies. */
export interface CriCallDeps {
  /** Makes a CRI client for a socket; absent (dev mode, tests): the RPC is Unimplemented. */
  readonly cri?: (socket: string) => CriClient;
  readonly store: MachineStore;
}

/** The socket a call went to and the value it answered. */
export interface CriCall<T> {
  readonly socket: string;
  readonly value: T;
}

/**
 * Runs `fn` against the node's CRI with a signal that aborts after `timeoutMs`.
 * @throws UnimplementedError without a CRI client; FailedPreconditionError
 *   without containerd (no RuntimeStatus); whatever `fn` throws, with
 *   `lastError` from RuntimeStatus passed to `failed` to build the refusal.
 */
export async function withCri<T>(
  deps: CriCallDeps,
  rpc: string,
  o: { timeoutMs: number; signal: AbortSignal },
  fn: (c: CriClient, signal: AbortSignal) => Promise<T>,
  failed: (e: unknown, socket: string, runtimeError: string) => Error,
): Promise<CriCall<T>> {
  if (deps.cri === undefined) {
    throw new UnimplementedError(
      `${rpc} is not available: this machined runs without a container runtime client`,
      { context: { rpc, missing: "a container runtime client" } },
    );
  }
  const status = deps.store.list(RUNTIME_STATUS).find((r) => r.metadata.id === RUNTIME_STATUS_ID);
  if (!status) {
    throw new FailedPreconditionError(
      `${rpc} needs containerd, which this node does not run (no RuntimeStatus)`,
      { context: { rpc } },
    );
  }
  const socket = status.spec.socket;
  const client = deps.cri(socket);
  try {
    const signal = AbortSignal.any([AbortSignal.timeout(o.timeoutMs), o.signal]);
    return { socket, value: await fn(client, signal) };
  } catch (e) {
    throw failed(e, socket, status.spec.lastError ?? "");
  } finally {
    client.close();
  }
}

/** The refusal of a CRI call containerd did not answer, naming the socket and RuntimeStatus's last error. */
export function unanswered(rpc: string) {
  return (e: unknown, socket: string, runtimeError: string): Error => {
    const why = runtimeError ? ` (RuntimeStatus: ${runtimeError})` : "";
    return new UnavailableError(
      `${rpc}: containerd's CRI on "${socket}" did not answer: ${(e as Error).message}${why}`,
      { context: { rpc, socket }, cause: e },
    );
  };
}
