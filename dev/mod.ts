/**
 * Dev mode: the node's domains against dev backends on a laptop, with the config and PKI
 * in a state dir and the config file reloaded on change. main.ts is its one importer;
 * harnesses use dev/testing.ts.
 *
 * @example
 * ```ts
 * import { runDevMode } from "./dev/mod.ts";
 * declare const options: Parameters<typeof runDevMode>[0];
 * Deno.exit(await runDevMode(options));
 * ```
 * @module
 */
export { devFileRoot, type DevOptions, runDevMode } from "./dev_mode.ts";
