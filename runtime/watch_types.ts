/**
 * The types of a store watch, apart from the Watcher that implements them, so the
 * stream (watch_stream.ts) and the watcher (watch.ts) share them without a cycle.
 */
import type { Resource } from "./resource.ts";

/** One item of a watch stream. */
export type WatchEvent<R extends Resource = Resource> =
  | { readonly kind: "created"; readonly resource: R }
  | { readonly kind: "updated"; readonly resource: R; readonly old: R }
  | { readonly kind: "destroyed"; readonly resource: R }
  /** Everything that existed when the watch (re)started has been delivered. */
  | { readonly kind: "bootstrapped" }
  /** The watcher fell behind; `dropped` live events were discarded. A re-bootstrap follows unless closed. */
  | { readonly kind: "overflow"; readonly dropped: number };

/** What happens when a watcher's queue overflows. */
export type OverflowPolicy = "rebootstrap" | "close";

/** Options of {@link Store.watch}. */
export interface WatchOptions {
  namespace?: string;
  id?: string;
  /** Live events held for a slow consumer before overflow. @default 4096 */
  capacity?: number;
  /** @default "rebootstrap" */
  onOverflow?: OverflowPolicy;
  /** Closes the watch when aborted. */
  signal?: AbortSignal;
}

/** The consumer side of a watch: an async iterable that must be closed. */
export interface Watch<R extends Resource = Resource> extends AsyncIterableIterator<WatchEvent<R>> {
  /** Stops the watch and releases it from the store. Idempotent. */
  close(): void;
  /** Live events waiting to be consumed. */
  readonly pending: number;
}
