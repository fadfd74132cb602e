/**
 * The in-memory resource store: typed, versioned, compare-and-swap updates,
 * owners, finalizers and watches. Every write is synchronous and commits in
 * one step, so watchers see changes in commit order; only {@link Store.modify}
 * awaits (the caller's function) and it retries on conflict.
 */
import type { Clock } from "./clock.ts";
import { systemClock } from "./clock.ts";
import { deepEqual, deepFreeze } from "./deep.ts";
import {
  AlreadyExistsError,
  ConflictError,
  FinalizersPendingError,
  isAlreadyExists,
  isConflict,
  NotFoundError,
  OwnerConflictError,
  PhaseConflictError,
} from "./errors.ts";
import {
  type Catalog,
  type LabelSelector,
  matchLabels,
  type Metadata,
  type Pointer,
  type ResourceOf,
  type TypeName,
} from "./resource.ts";
import { type Watch, Watcher, type WatchEvent, type WatchOptions } from "./watch.ts";

/** What a writer supplies to create a resource. */
export interface CreateInput<M extends Catalog, K extends TypeName<M>> extends Pointer<K> {
  spec: M[K];
  owner: string;
  labels?: Record<string, string>;
  finalizers?: string[];
}

/** What a writer supplies to update one: the version it read (compare-and-swap). */
export interface UpdateInput<M extends Catalog, K extends TypeName<M>> extends Pointer<K> {
  version: number;
  spec: M[K];
  owner: string;
  /** Replaces the labels when given. */
  labels?: Record<string, string>;
}

/** Options of {@link Store.modify}. */
export interface ModifyOptions {
  /** Replaces the labels when given. */
  labels?: Record<string, string>;
  /** Create the resource when missing. @default true */
  create?: boolean;
  /** Conflicts retried before giving up. @default 16 */
  maxRetries?: number;
}

/** Options of {@link Store.list}. */
export interface ListOptions {
  namespace?: string;
  labels?: LabelSelector;
}

type AnyRes = ResourceOf<Catalog, string>;

/** Observer of every committed change, for metrics and the event stream. */
export type CommitListener = (event: WatchEvent) => void;

/** Where the store delivers one type's events: a {@link Watcher} or a {@link Store.subscribe} sink. */
interface Sink {
  matches(r: AnyRes): boolean;
  push(event: WatchEvent): void;
}

/** A typed in-memory resource store over catalog `M`. */
export class Store<M extends Catalog> {
  #byType = new Map<string, Map<string, AnyRes>>();
  #watchers = new Map<string, Set<Sink>>();
  #clock: Clock;
  #commitListeners = new Set<CommitListener>();

  constructor(options: { clock?: Clock } = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * The resource, or throws.
   * @throws NotFoundError when it does not exist.
   */
  get<K extends TypeName<M>>(type: K, namespace: string, id: string): ResourceOf<M, K> {
    const r = this.find(type, namespace, id);
    if (!r) throw new NotFoundError({ type, namespace, id });
    return r;
  }

  /** The resource, or undefined. */
  find<K extends TypeName<M>>(
    type: K,
    namespace: string,
    id: string,
  ): ResourceOf<M, K> | undefined {
    return this.#byType.get(type)?.get(key(namespace, id)) as ResourceOf<M, K> | undefined;
  }

  /** Resources of a type, ordered by namespace then id, filtered by namespace and labels. */
  list<K extends TypeName<M>>(type: K, options: ListOptions = {}): ResourceOf<M, K>[] {
    const out: ResourceOf<M, K>[] = [];
    for (const r of this.#byType.get(type)?.values() ?? []) {
      if (options.namespace !== undefined && r.metadata.namespace !== options.namespace) continue;
      if (!matchLabels(r.metadata.labels, options.labels)) continue;
      out.push(r as ResourceOf<M, K>);
    }
    return out.sort(byPointer);
  }

  /**
   * Creates a resource at version 1.
   * @throws AlreadyExistsError when the pointer is taken.
   */
  create<K extends TypeName<M>>(input: CreateInput<M, K>): ResourceOf<M, K> {
    const table = this.#table(input.type);
    const k = key(input.namespace, input.id);
    if (table.has(k)) throw new AlreadyExistsError(pointerOf(input));
    const now = new Date(this.#clock.now());
    const r = freeze(input.type, {
      namespace: input.namespace,
      type: input.type,
      id: input.id,
      version: 1,
      owner: input.owner,
      phase: "running",
      finalizers: [...(input.finalizers ?? [])],
      labels: { ...(input.labels ?? {}) },
      created: now,
      updated: now,
    }, input.spec);
    table.set(k, r);
    this.#emit(input.type, { kind: "created", resource: r });
    return r as ResourceOf<M, K>;
  }

  /**
   * Compare-and-swap update. An update that changes nothing returns the current
   * resource without a new version or event.
   * @throws NotFoundError, ConflictError (stale version), OwnerConflictError, PhaseConflictError.
   */
  update<K extends TypeName<M>>(input: UpdateInput<M, K>): ResourceOf<M, K> {
    const cur = this.get(input.type, input.namespace, input.id);
    const ptr = pointerOf(input);
    if (cur.metadata.version !== input.version) {
      throw new ConflictError(ptr, input.version, cur.metadata.version);
    }
    if (cur.metadata.owner !== input.owner) {
      throw new OwnerConflictError(ptr, cur.metadata.owner, input.owner);
    }
    if (cur.metadata.phase === "tearingDown") {
      throw new PhaseConflictError(ptr, "it is tearing down");
    }
    const labels = input.labels ?? cur.metadata.labels;
    if (deepEqual(cur.spec, input.spec) && deepEqual(cur.metadata.labels, labels)) return cur;
    return this.#replace(cur, { labels: { ...labels } }, input.spec);
  }

  /**
   * Reads, applies `fn` to a private copy of the spec (undefined when missing) and
   * writes the result with compare-and-swap, retrying when another writer won.
   * @throws OwnerConflictError, PhaseConflictError, NotFoundError (when `create` is false), or
   * ConflictError after `maxRetries`.
   */
  async modify<K extends TypeName<M>>(
    ptr: Pointer<K>,
    owner: string,
    fn: (current: M[K] | undefined) => M[K] | Promise<M[K]>,
    options: ModifyOptions = {},
  ): Promise<ResourceOf<M, K>> {
    const maxRetries = options.maxRetries ?? 16;
    for (let attempt = 0;; attempt++) {
      const cur = this.find(ptr.type, ptr.namespace, ptr.id);
      if (!cur && options.create === false) throw new NotFoundError(pointerOf(ptr));
      const spec = await fn(cur ? structuredClone(cur.spec) as M[K] : undefined);
      try {
        if (!cur) {
          return this.create({ ...pointerOf(ptr), spec, owner, labels: options.labels });
        }
        return this.update({
          ...pointerOf(ptr),
          version: cur.metadata.version,
          spec,
          owner,
          labels: options.labels,
        });
      } catch (e) {
        if ((isConflict(e) || isAlreadyExists(e)) && attempt < maxRetries) continue;
        throw e;
      }
    }
  }

  /**
   * Moves a resource to `tearingDown`. Returns true when no finalizers remain, so
   * the owner may destroy it now. Idempotent.
   * @throws NotFoundError, OwnerConflictError.
   */
  teardown<K extends TypeName<M>>(ptr: Pointer<K>, owner: string): boolean {
    const cur = this.get(ptr.type, ptr.namespace, ptr.id);
    if (cur.metadata.owner !== owner) {
      throw new OwnerConflictError(pointerOf(ptr), cur.metadata.owner, owner);
    }
    if (cur.metadata.phase !== "tearingDown") {
      this.#replace(cur, { phase: "tearingDown" }, cur.spec);
    }
    return cur.metadata.finalizers.length === 0;
  }

  /**
   * Removes a resource whose finalizers are all gone.
   * @throws NotFoundError, OwnerConflictError, FinalizersPendingError.
   */
  destroy<K extends TypeName<M>>(ptr: Pointer<K>, owner: string): void {
    const cur = this.get(ptr.type, ptr.namespace, ptr.id);
    if (cur.metadata.owner !== owner) {
      throw new OwnerConflictError(pointerOf(ptr), cur.metadata.owner, owner);
    }
    if (cur.metadata.finalizers.length > 0) {
      throw new FinalizersPendingError(pointerOf(ptr), cur.metadata.finalizers);
    }
    this.#table(ptr.type).delete(key(ptr.namespace, ptr.id));
    this.#emit(ptr.type, { kind: "destroyed", resource: cur });
  }

  /**
   * Adds finalizers (any writer may: it is how consumers hold a resource).
   * @throws NotFoundError, PhaseConflictError when the resource is tearing down.
   */
  addFinalizer<K extends TypeName<M>>(ptr: Pointer<K>, ...finalizers: string[]): ResourceOf<M, K> {
    const cur = this.get(ptr.type, ptr.namespace, ptr.id);
    const missing = finalizers.filter((f) => !cur.metadata.finalizers.includes(f));
    if (missing.length === 0) return cur;
    if (cur.metadata.phase === "tearingDown") {
      throw new PhaseConflictError(pointerOf(ptr), "cannot add finalizers while tearing down");
    }
    return this.#replace(cur, { finalizers: [...cur.metadata.finalizers, ...missing] }, cur.spec);
  }

  /** Removes finalizers; a no-op for ones not present. @throws NotFoundError. */
  removeFinalizer<K extends TypeName<M>>(
    ptr: Pointer<K>,
    ...finalizers: string[]
  ): ResourceOf<M, K> {
    const cur = this.get(ptr.type, ptr.namespace, ptr.id);
    const kept = cur.metadata.finalizers.filter((f) => !finalizers.includes(f));
    if (kept.length === cur.metadata.finalizers.length) return cur;
    return this.#replace(cur, { finalizers: kept }, cur.spec);
  }

  /** Watches one type (optionally one namespace or id). Close it when done. */
  watch<K extends TypeName<M>>(type: K, options: WatchOptions = {}): Watch<ResourceOf<M, K>> {
    const filter = { namespace: options.namespace, id: options.id };
    const set = this.#watchersOf(type);
    const watcher = new Watcher<AnyRes>(
      filter,
      options.capacity ?? 4096,
      options.onOverflow ?? "rebootstrap",
      () =>
        this.list(type, { namespace: filter.namespace }).filter((r) =>
          filter.id === undefined || r.metadata.id === filter.id
        ),
      () => set.delete(watcher),
    );
    set.add(watcher);
    if (options.signal) {
      if (options.signal.aborted) watcher.close();
      else options.signal.addEventListener("abort", () => watcher.close(), { once: true });
    }
    return watcher as unknown as Watch<ResourceOf<M, K>>;
  }

  /**
   * A synchronous observer of one type's commits (optionally one namespace or
   * id), called in commit order from inside the write, for fan-outs that keep
   * their own queue (runtime/watch_hub.ts): unlike {@link Store.watch}, nothing
   * is buffered here, so a snapshot taken with {@link Store.list} right after
   * subscribing lines up exactly with the events that follow. The listener must
   * not throw or write to the store. Counted in {@link Store.watchCount}.
   * Returns the unsubscribe function (idempotent).
   */
  subscribe<K extends TypeName<M>>(
    type: K,
    filter: { namespace?: string; id?: string },
    listener: (event: WatchEvent<ResourceOf<M, K>>) => void,
  ): () => void {
    const set = this.#watchersOf(type);
    const sink: Sink = {
      matches: (r) =>
        (filter.namespace === undefined || r.metadata.namespace === filter.namespace) &&
        (filter.id === undefined || r.metadata.id === filter.id),
      push: listener as (event: WatchEvent) => void,
    };
    set.add(sink);
    return () => set.delete(sink);
  }

  /** Number of open watches and subscriptions (for metrics and leak checks). */
  get watchCount(): number {
    let n = 0;
    for (const set of this.#watchers.values()) n += set.size;
    return n;
  }

  /** Observes every commit of every type; returns an unsubscribe function. */
  onCommit(listener: CommitListener): () => void {
    this.#commitListeners.add(listener);
    return () => this.#commitListeners.delete(listener);
  }

  #replace<K extends TypeName<M>>(
    cur: ResourceOf<M, K>,
    changes: Partial<Pick<Metadata, "phase" | "finalizers" | "labels">>,
    spec: M[K],
  ): ResourceOf<M, K> {
    const next = freeze(cur.metadata.type, {
      ...cur.metadata,
      ...changes,
      version: cur.metadata.version + 1,
      updated: new Date(Math.max(this.#clock.now(), cur.metadata.updated.getTime())),
    }, spec === cur.spec ? cur.spec : spec) as ResourceOf<M, K>;
    this.#table(cur.metadata.type).set(key(cur.metadata.namespace, cur.metadata.id), next);
    this.#emit(cur.metadata.type, { kind: "updated", resource: next, old: cur });
    return next;
  }

  #emit(type: string, event: WatchEvent): void {
    const resource = "resource" in event ? event.resource : undefined;
    for (const w of this.#watchers.get(type) ?? []) {
      if (!resource || w.matches(resource)) w.push(event);
    }
    for (const l of this.#commitListeners) l(event);
  }

  #table(type: string): Map<string, AnyRes> {
    let t = this.#byType.get(type);
    if (!t) this.#byType.set(type, t = new Map());
    return t;
  }

  #watchersOf(type: string): Set<Sink> {
    let s = this.#watchers.get(type);
    if (!s) this.#watchers.set(type, s = new Set());
    return s;
  }
}

function key(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

function pointerOf<K extends string>(p: Pointer<K>): Pointer<K> {
  return { type: p.type, namespace: p.namespace, id: p.id };
}

/**
 * Namespace, then id, each by code unit: `localeCompare` (ICU collation) made
 * this sort the largest cost of `list` on a node under TCG (issue 27's guest profile).
 */
function byPointer(a: AnyRes, b: AnyRes): number {
  return compareText(a.metadata.namespace, b.metadata.namespace) ||
    compareText(a.metadata.id, b.metadata.id);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function freeze(_type: string, metadata: Metadata, spec: unknown): AnyRes {
  const frozenSpec = Object.isFrozen(spec) ? spec : deepFreeze(structuredClone(spec));
  return deepFreeze({ metadata: { ...metadata }, spec: frozenSpec }) as AnyRes;
}
