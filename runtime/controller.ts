/**
 * The controller contract, COSI-style but typed: a controller declares what it
 * reads and what it owns as data, and the runtime enforces both.
 */
import type { Clock } from "./clock.ts";
import type { LabelSelector, Pointer, ResourceOf, TypeName } from "./resource.ts";
import type { Catalog } from "./resource.ts";

/** `strong` inputs may carry this controller's finalizer; `weak` ones are only read. */
export type InputKind = "weak" | "strong";

/** `exclusive` outputs are owned by one controller only; `shared` ones by several (each its own ids). */
export type OutputKind = "exclusive" | "shared";

/** A type the controller watches; changes to it trigger a reconcile. */
export interface InputDecl<M extends Catalog> {
  readonly type: TypeName<M>;
  readonly kind: InputKind;
  /** Only this namespace triggers and may be read. */
  readonly namespace?: string;
  /** Only this id triggers. */
  readonly id?: string;
}

/** A type the controller writes. */
export interface OutputDecl<M extends Catalog> {
  readonly type: TypeName<M>;
  readonly kind: OutputKind;
  /**
   * Tear down and destroy this controller's resources of the type that a successful
   * reconcile did not write or keep. @default true
   */
  readonly gc?: boolean;
}

/** What a controller gets for one reconcile cycle. Calls outside the declarations throw. */
export interface ReconcileContext<M extends Catalog> {
  /** Aborted when the runtime stops or the cycle times out. */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  /** Structured log line attributed to the controller. */
  log(message: string, fields?: Record<string, unknown>): void;

  get<K extends TypeName<M>>(type: K, namespace: string, id: string): ResourceOf<M, K>;
  find<K extends TypeName<M>>(type: K, namespace: string, id: string): ResourceOf<M, K> | undefined;
  list<K extends TypeName<M>>(
    type: K,
    options?: { namespace?: string; labels?: LabelSelector },
  ): ResourceOf<M, K>[];

  /**
   * Creates or updates an output owned by this controller and marks it kept for this cycle.
   * Passing a function lets it derive the spec from the current one.
   */
  apply<K extends TypeName<M>>(
    ptr: Pointer<K>,
    spec: M[K] | ((current: M[K] | undefined) => M[K]),
    options?: { labels?: Record<string, string> },
  ): Promise<ResourceOf<M, K>>;
  /** Marks an existing output as kept this cycle without changing it. */
  keep<K extends TypeName<M>>(ptr: Pointer<K>): void;
  /** Tears an output down now; destroys it when no finalizers remain. Returns true when destroyed. */
  remove<K extends TypeName<M>>(ptr: Pointer<K>): boolean;

  /** Adds this controller's finalizer (or `name`) to a strong input. */
  addFinalizer<K extends TypeName<M>>(ptr: Pointer<K>, name?: string): void;
  /** Removes this controller's finalizer (or `name`) from a strong input. */
  removeFinalizer<K extends TypeName<M>>(ptr: Pointer<K>, name?: string): void;

  /** Asks for another reconcile after `ms` even if no input changes (e.g. a lease timer). */
  requeueAfter(ms: number): void;
}

/** A controller: declarations plus a reconcile function. */
export interface Controller<M extends Catalog> {
  /** Qualified, e.g. `network.AddressSpecController`. Also the owner of its outputs. */
  readonly name: string;
  readonly inputs: readonly InputDecl<M>[];
  readonly outputs: readonly OutputDecl<M>[];
  /** Reconcile at least this often (ms), even without input changes. */
  readonly resyncInterval?: number;
  /** Brings outputs in line with inputs. Throwing makes the runtime back off and retry. */
  reconcile(ctx: ReconcileContext<M>): Promise<void>;
  /**
   * For controllers that mirror state outside the store (kernel events, sockets):
   * started once with the runtime, it calls `wake()` whenever that state changes,
   * which triggers a reconcile like an input change would. It should return when
   * `signal` aborts; if it throws, the error is logged and counted, the controller
   * woken, and the watch started again after a backoff (runtime/watch_supervisor.ts).
   */
  watch?(wake: () => void, signal: AbortSignal): Promise<void>;
}

/** Thrown when a controller reads or writes outside its declarations. */
export class AccessError extends Error {
  override name = "AccessError";
  constructor(readonly controller: string, readonly operation: string, readonly type: string) {
    super(`Controller "${controller}" may not ${operation} resources of type "${type}"`);
  }
}

/** Thrown at registration for invalid declarations (duplicate names, two exclusive owners). */
export class RegistrationError extends Error {
  override name = "RegistrationError";
}
