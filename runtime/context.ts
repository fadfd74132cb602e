/**
 * The enforcing implementation of {@link ReconcileContext}: reads are limited to
 * declared inputs and outputs, writes to declared outputs, finalizers to strong
 * inputs. It records which outputs a cycle kept so the runtime can collect the rest.
 */
import type { Clock } from "./clock.ts";
import { AccessError, type Controller, type ReconcileContext } from "./controller.ts";
import { isNotFound, PhaseConflictError } from "./errors.ts";
import {
  type Catalog,
  type Pointer,
  pointerKey,
  type ResourceOf,
  type TypeName,
} from "./resource.ts";
import type { Store } from "./store.ts";

/** One cycle's context; invalid (throws) once the cycle has ended. */
export class CycleContext<M extends Catalog> implements ReconcileContext<M> {
  /** Pointer keys of outputs written or kept this cycle. */
  readonly kept = new Set<string>();
  /** Requested requeue delay, if any (the smallest asked for). */
  requeueMs: number | undefined;
  #expired = false;
  #readable: Set<string>;
  #writable: Set<string>;
  #strong: Set<string>;

  constructor(
    readonly store: Store<M>,
    readonly controller: Controller<M>,
    readonly signal: AbortSignal,
    readonly clock: Clock,
    readonly logger: (
      controller: string,
      message: string,
      fields?: Record<string, unknown>,
    ) => void,
  ) {
    this.#writable = new Set(controller.outputs.map((o) => o.type));
    this.#strong = new Set(controller.inputs.filter((i) => i.kind === "strong").map((i) => i.type));
    this.#readable = new Set([...controller.inputs.map((i) => i.type), ...this.#writable]);
  }

  /** Ends the cycle: later calls throw. */
  expire(): void {
    this.#expired = true;
  }

  log(message: string, fields?: Record<string, unknown>): void {
    this.logger(this.controller.name, message, fields);
  }

  get<K extends TypeName<M>>(type: K, namespace: string, id: string): ResourceOf<M, K> {
    this.#check("read", type, this.#readable);
    return this.store.get(type, namespace, id);
  }

  find<K extends TypeName<M>>(type: K, namespace: string, id: string) {
    this.#check("read", type, this.#readable);
    return this.store.find(type, namespace, id);
  }

  list<K extends TypeName<M>>(type: K, options?: Parameters<Store<M>["list"]>[1]) {
    this.#check("read", type, this.#readable);
    return this.store.list(type, options);
  }

  async apply<K extends TypeName<M>>(
    ptr: Pointer<K>,
    spec: M[K] | ((current: M[K] | undefined) => M[K]),
    options: { labels?: Record<string, string> } = {},
  ): Promise<ResourceOf<M, K>> {
    this.#check("write", ptr.type, this.#writable);
    const owner = this.controller.name;
    const existing = this.store.find(ptr.type, ptr.namespace, ptr.id);
    if (existing?.metadata.phase === "tearingDown" && existing.metadata.owner === owner) {
      if (existing.metadata.finalizers.length > 0) {
        throw new PhaseConflictError(ptr, "it is tearing down and finalizers remain");
      }
      this.store.destroy(ptr, owner);
    }
    const fn = typeof spec === "function"
      ? spec as (current: M[K] | undefined) => M[K]
      : () => spec as M[K];
    const r = await this.store.modify(ptr, owner, fn, { labels: options.labels });
    this.#check("write", ptr.type, this.#writable);
    this.kept.add(pointerKey(ptr));
    return r;
  }

  keep<K extends TypeName<M>>(ptr: Pointer<K>): void {
    this.#check("write", ptr.type, this.#writable);
    this.kept.add(pointerKey(ptr));
  }

  remove<K extends TypeName<M>>(ptr: Pointer<K>): boolean {
    this.#check("write", ptr.type, this.#writable);
    this.kept.delete(pointerKey(ptr));
    try {
      if (!this.store.teardown(ptr, this.controller.name)) return false;
      this.store.destroy(ptr, this.controller.name);
      return true;
    } catch (e) {
      if (isNotFound(e)) return true;
      throw e;
    }
  }

  addFinalizer<K extends TypeName<M>>(ptr: Pointer<K>, name = this.controller.name): void {
    this.#check("finalize", ptr.type, this.#strong);
    this.store.addFinalizer(ptr, name);
  }

  removeFinalizer<K extends TypeName<M>>(ptr: Pointer<K>, name = this.controller.name): void {
    this.#check("finalize", ptr.type, this.#strong);
    try {
      this.store.removeFinalizer(ptr, name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  requeueAfter(ms: number): void {
    this.requeueMs = this.requeueMs === undefined ? ms : Math.min(this.requeueMs, ms);
  }

  #check(operation: string, type: string, allowed: Set<string>): void {
    if (this.#expired) {
      throw new AccessError(this.controller.name, `${operation} after its cycle ended:`, type);
    }
    if (!allowed.has(type)) throw new AccessError(this.controller.name, operation, type);
  }
}
