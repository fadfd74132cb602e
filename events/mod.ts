/**
 * Machine events (boot phases, tasks, service state changes) with a bounded
 * history, served by the API's Events stream and `machinectl events`.
 *
 * @example
 * ```ts
 * import { EventBus } from "./events/mod.ts";
 * const bus = new EventBus();
 * bus.emit("phase", "mountFilesystems", "started");
 * for await (const e of bus.subscribe({ tail: 10 })) console.log(e.subject, e.action);
 * ```
 * @module
 */
export * from "./bus.ts";
