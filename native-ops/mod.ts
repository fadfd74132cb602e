/**
 * The one door to the native addon. Loads `machined_native_ops.node` through
 * Node-API (needs `--allow-ffi`) and turns the crate's `SYS:<errno>:<op>:<detail>`
 * failures into a typed {@link SysError}. Nothing else in machined imports the addon.
 *
 * @example
 * ```ts
 * import { loadNative } from "./native-ops/mod.ts";
 * const native = loadNative();
 * console.log(native.nativeVersion());
 * ```
 * @module
 */
import { createRequire } from "node:module";
import { errnoCode } from "./errno.ts";

export { errnoValue } from "./errno.ts";

/** A syscall that failed, with the errno and the operation; never a crash. */
export class SysError extends Error {
  override name = "SysError";
  constructor(
    /** The operation that failed, e.g. `mount` or `RTM_NEWADDR`. */
    readonly op: string,
    /** The raw errno value. */
    readonly errno: number,
    /** What it was applied to (a path, an interface, ...). */
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`${op}(${detail}) failed: ${errnoCode(errno)} (errno ${errno})`, options);
  }

  /** The symbolic errno name, e.g. `EEXIST`. */
  get code(): string {
    return errnoCode(this.errno);
  }
}

/** True when `e` is a {@link SysError} with the given symbolic code. */
export function isSysError(e: unknown, code?: string): e is SysError {
  return e instanceof SysError && (code === undefined || e.code === code);
}

const SYS_PREFIX = /^SYS:(-?\d+):([^:]*):(.*)$/s;

/** Turn an error thrown by the addon into a {@link SysError} when it carries the crate's format. */
export function toSysError(e: unknown): unknown {
  if (e instanceof SysError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const m = SYS_PREFIX.exec(message);
  if (!m) return e;
  return new SysError(m[2], Number(m[1]), m[3], { cause: e });
}

/** Path of the addon next to this file, where `deno task native` puts it. */
export const NATIVE_ADDON_PATH = new URL("./machined_native_ops.node", import.meta.url);

// deno-lint-ignore no-explicit-any
type Addon = Record<string, (...args: any[]) => any>;

let cached: Addon | undefined;

/**
 * Load the addon once and wrap every export so failures become {@link SysError}s.
 * @throws Error when the addon is missing (run `deno task native`).
 */
export function loadNative(path: string | URL = NATIVE_ADDON_PATH): Addon {
  if (cached) return cached;
  const raw = createRequire(import.meta.url)(
    path instanceof URL ? path.pathname : path,
  ) as Addon;
  const wrapped: Addon = {};
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== "function") {
      wrapped[name] = value;
      continue;
    }
    wrapped[name] = (...args: unknown[]) => {
      try {
        const out = value(...args);
        if (out instanceof Promise) {
          return out.catch((e) => {
            throw toSysError(e);
          });
        }
        return out;
      } catch (e) {
        throw toSysError(e);
      }
    };
  }
  cached = wrapped;
  return wrapped;
}
