/**
 * The typed resource store and the COSI-style controller runtime at machined's
 * heart. The store is generic over a catalog of resource types; machined closes
 * the catalog in `resources/`.
 *
 * @example
 * ```ts
 * import { ControllerRuntime, Store } from "./runtime/mod.ts";
 * type Catalog = { Greeting: { text: string } };
 * const store = new Store<Catalog>();
 * store.create({ type: "Greeting", namespace: "default", id: "a", spec: { text: "hi" }, owner: "me" });
 * const runtime = new ControllerRuntime(store);
 * runtime.start();
 * await runtime.stop();
 * ```
 * @module
 */
export * from "./resource.ts";
export * from "./errors.ts";
export * from "./clock.ts";
export * from "./backoff.ts";
export * from "./watch.ts";
export * from "./watch_hub.ts";
export * from "./store.ts";
export * from "./controller.ts";
export * from "./runtime.ts";
export * from "./watch_supervisor.ts";
export * from "./transform.ts";
export { deepEqual, deepFreeze } from "./deep.ts";
