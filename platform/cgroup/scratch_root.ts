/**
 * A scratch cgroup root for privileged tests: under the v2 hierarchy when it
 * offers memory and pids, else under the v1 memory hierarchy of a hybrid host.
 * Returns undefined when neither is writable.
 * @module
 */

/** Where a test may make cgroups, and which kind of hierarchy it is. */
export interface ScratchCgroupRoot {
  root: string;
  kind: "v2" | "v1-memory";
}

async function text(path: string): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch {
    return undefined;
  }
}

/** Creates `<hierarchy>/machined-test-<tag>-<pid>` (the caller removes it). */
export async function scratchCgroupRoot(tag: string): Promise<ScratchCgroupRoot | undefined> {
  const name = `machined-test-${tag}-${Deno.pid}`;
  const candidates: Array<[string, ScratchCgroupRoot["kind"]]> = [];
  for (const v2 of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
    const controllers = (await text(`${v2}/cgroup.controllers`))?.split(" ") ?? [];
    if (controllers.includes("memory") && controllers.includes("pids")) {
      candidates.push([`${v2}/${name}`, "v2"]);
    }
  }
  if (await text("/sys/fs/cgroup/memory/memory.limit_in_bytes") !== undefined) {
    candidates.push([`/sys/fs/cgroup/memory/${name}`, "v1-memory"]);
  }
  for (const [root, kind] of candidates) {
    try {
      await Deno.mkdir(root, { recursive: true });
      return { root, kind };
    } catch {
      // try the next one
    }
  }
  return undefined;
}
