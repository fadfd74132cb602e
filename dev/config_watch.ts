/**
 * Dev mode's live reload: watches one file for changes (editors replace
 * files, so the directory is watched), calls back once per burst of events,
 * and applies the new text through the config keeper, so a bad edit shows in
 * ConfigStatus and in machined's log instead of vanishing.
 */
import { formatConfigErrors } from "../config/mod.ts";
import type { ConfigKeeper } from "../config/keeper/mod.ts";
import type { ConfigLoad } from "../config/keeper/mod.ts";

/**
 * Starts watching; returns a function that stops it. A callback that fails
 * goes to `onError` (by default, to the console): nothing is swallowed.
 */
export function watchConfigFile(
  path: string,
  onChange: () => Promise<void>,
  debounceMs = 200,
  onError: (error: unknown) => void = (e) => console.error(`config watch ${path}:`, e),
) {
  const dir = path.slice(0, path.lastIndexOf("/")) || "/";
  const watcher = Deno.watchFs(dir, { recursive: false });
  let timer: ReturnType<typeof setTimeout> | undefined;
  (async () => {
    try {
      for await (const ev of watcher) {
        if (!ev.paths.includes(path)) continue;
        clearTimeout(timer);
        timer = setTimeout(() => void onChange().catch(onError), debounceMs);
      }
    } catch {
      // closed
    }
  })();
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}

/**
 * Reads `path` and applies it. An invalid text is recorded in ConfigStatus
 * (the config in force stays) and its errors, which never quote a secret, are
 * logged; a file that cannot be read is logged and changes nothing.
 */
export async function reloadConfigFile(
  keeper: ConfigKeeper,
  path: string,
): Promise<ConfigLoad | undefined> {
  const logger = keeper.machined.logger;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    logger.warn("config", `cannot read ${path}; keeping the config in force`, {
      error: e instanceof Error ? e.message : String(e),
    });
    return undefined;
  }
  const r = await keeper.apply(text, path);
  if (r.state === "invalid") {
    logger.warn("config", `reloaded ${path}: invalid; keeping the config in force`, {
      errors: formatConfigErrors(r.errors),
    });
  } else {
    logger.info("config", `reloaded ${path}: ${r.state}`);
  }
  return r;
}
