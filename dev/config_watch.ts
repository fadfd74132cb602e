/**
 * Watches one file for changes (editors replace files, so the directory is
 * watched) and calls back once per burst of events.
 */

/** Starts watching; returns a function that stops it. */
export function watchConfigFile(path: string, onChange: () => Promise<void>, debounceMs = 200) {
  const dir = path.slice(0, path.lastIndexOf("/")) || "/";
  const watcher = Deno.watchFs(dir, { recursive: false });
  let timer: ReturnType<typeof setTimeout> | undefined;
  (async () => {
    try {
      for await (const ev of watcher) {
        if (!ev.paths.includes(path)) continue;
        clearTimeout(timer);
        timer = setTimeout(() => void onChange().catch(() => {}), debounceMs);
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
