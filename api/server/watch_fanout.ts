/**
 * The Watch RPC's fan-out: every API stream on one (type, namespace, id)
 * reads one shared store subscription (runtime/watch_hub.ts) at its own
 * cursor, so a thousand streams cost one subscription and one bounded log,
 * and a stream that falls more than {@link WATCH_STREAM_CAPACITY} events
 * behind overflows alone (`overflow{dropped}`, then the contents again). Each
 * live event is redacted and mapped to its message once per visibility, not
 * once per stream: every stream that reads it yields the same message.
 */
import {
  type Catalog,
  type ResourceOf,
  type TypeName,
  type Watch,
  type WatchEvent,
  WatchHub,
} from "../../runtime/mod.ts";
import type { Store } from "../../runtime/mod.ts";
import { toBinary } from "@bufbuild/protobuf";
import { type WatchResponse, WatchResponseSchema } from "../gen/machined/v1/machine_pb.ts";
import { type AnyMachineResource, watchEventToProto } from "../mapping/mod.ts";
import type { Role } from "../../pki/mod.ts";
import { redactResource, type Visibility, visibilityOf } from "../auth/mod.ts";

/** Events a Watch stream may fall behind before it overflows (docs/api.md, "Watch"). */
export const WATCH_STREAM_CAPACITY = 4096;

/** Options of {@link WatchFanout.stream}. */
export interface WatchStreamOptions {
  readonly namespace?: string;
  readonly id?: string;
  /** Ends the stream (the call's signal). */
  readonly signal?: AbortSignal;
  /** @default WATCH_STREAM_CAPACITY */
  readonly capacity?: number;
}

/** Shared watches for the API; see the module doc. */
export interface WatchFanout<M extends Catalog> {
  /** A watch on the shared hub, with the API's capacity unless told. */
  open<K extends TypeName<M>>(type: K, options: WatchStreamOptions): Watch<ResourceOf<M, K>>;
  /** `event` as `role` may see it. Live events are mapped once per visibility and shared. */
  message(event: WatchEvent, role: Role | undefined): WatchResponse;
  /**
   * `event` as one gRPC length-prefixed message (5-byte header, then the
   * encoded WatchResponse): encoded once per visibility for live events, so a
   * thousand streams write the same bytes.
   */
  frame(event: WatchEvent, role: Role | undefined): Uint8Array;
  /** The stream of one Watch call, as `role` may see it. */
  stream<K extends TypeName<M>>(
    type: K,
    options: WatchStreamOptions,
    role: Role | undefined,
  ): AsyncGenerator<WatchResponse>;
  /** The hub behind the streams (subscriptions and cursors, for tests and metrics). */
  readonly hub: WatchHub<M>;
}

/** A fan-out over `store`; machined makes one, with its API service. */
export function createWatchFanout<M extends Catalog>(store: Store<M>): WatchFanout<M> {
  const hub = new WatchHub(store);
  const messages: Record<Visibility, WeakMap<object, WatchResponse>> = {
    reader: new WeakMap(),
    privileged: new WeakMap(),
  };
  const frames: Record<Visibility, WeakMap<object, Uint8Array>> = {
    reader: new WeakMap(),
    privileged: new WeakMap(),
  };
  const message = (event: WatchEvent, role: Role | undefined): WatchResponse => {
    // Markers are the cursor's own objects; resource events are shared by every cursor.
    const shared = isResourceEvent(event);
    const cache = messages[visibilityOf(role)];
    const hit = shared ? cache.get(event) : undefined;
    if (hit) return hit;
    const m = watchEventToProto(redactEvent(event as WatchEvent<AnyMachineResource>, role));
    if (shared) cache.set(event, m);
    return m;
  };
  const frame = (event: WatchEvent, role: Role | undefined): Uint8Array => {
    const shared = isResourceEvent(event);
    const cache = frames[visibilityOf(role)];
    const hit = shared ? cache.get(event) : undefined;
    if (hit) return hit;
    const f = grpcFrame(toBinary(WatchResponseSchema, message(event, role)));
    if (shared) cache.set(event, f);
    return f;
  };
  const open = <K extends TypeName<M>>(type: K, options: WatchStreamOptions) =>
    hub.watch(type, {
      namespace: options.namespace,
      id: options.id,
      signal: options.signal,
      capacity: options.capacity ?? WATCH_STREAM_CAPACITY,
    });
  return {
    hub,
    open,
    message,
    frame,
    async *stream(type, options, role) {
      const watch = open(type, options);
      try {
        for await (const event of watch) yield message(event, role);
      } finally {
        watch.close();
      }
    },
  };
}

function isResourceEvent(event: WatchEvent): boolean {
  return event.kind === "created" || event.kind === "updated" || event.kind === "destroyed";
}

/** A gRPC length-prefixed message: flags 0 (uncompressed), length big-endian, bytes. */
export function grpcFrame(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + bytes.byteLength);
  new DataView(out.buffer).setUint32(1, bytes.byteLength);
  out.set(bytes, 5);
  return out;
}

function redactEvent(
  event: WatchEvent<AnyMachineResource>,
  role: Role | undefined,
): WatchEvent<AnyMachineResource> {
  switch (event.kind) {
    case "created":
    case "destroyed":
      return { ...event, resource: redactResource(event.resource, role) };
    case "updated":
      return {
        ...event,
        resource: redactResource(event.resource, role),
        old: redactResource(event.old, role),
      };
    default:
      return event;
  }
}
