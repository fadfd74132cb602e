/**
 * machined's version and the source revision it was built from, reported by
 * the Version RPC and `machinectl version`.
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { slotOfCmdline } from "./loader_config.ts";

/** machined's version; kept equal to deno.json's. */
export const MACHINED_VERSION = "0.1.0";

/**
 * The image's release record: `key=value` lines the imager writes, among them
 * `commit=<git revision>` (imager/build_image.ts, `LAYOUT.release`).
 */
export const RELEASE_FILE = "/etc/machined/release";

/** The checkout this module lives in (dev mode runs from one). */
const SOURCE_DIR = sourceDirOf(import.meta.url);

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The commit checked out in `dir`, read from its git metadata (HEAD, the ref
 * it names, packed-refs; linked worktrees too) without running git: machined
 * must not spawn processes outside its process backend, whose reaper would
 * reap them. Undefined when `dir` is not a git checkout.
 */
export async function readGitHead(dir: string): Promise<string | undefined> {
  if (dir === "") return undefined;
  const read = (path: string) => Deno.readTextFile(path).then((t) => t.trim(), () => undefined);
  let gitDir = join(dir, ".git");
  const link = await Deno.stat(gitDir).then((s) => s.isFile, () => undefined);
  if (link === undefined) return undefined;
  if (link) {
    const target = /^gitdir: (.+)$/m.exec((await read(gitDir)) ?? "")?.[1];
    if (!target) return undefined;
    gitDir = resolve(dir, target);
  }
  const head = await read(join(gitDir, "HEAD"));
  if (head === undefined || SHA.test(head)) return head;
  const ref = /^ref: (.+)$/.exec(head)?.[1];
  if (!ref) return undefined;
  const commonRel = await read(join(gitDir, "commondir"));
  const common = commonRel ? resolve(gitDir, commonRel) : gitDir;
  for (const d of [gitDir, common]) {
    const sha = await read(join(d, ref));
    if (sha && SHA.test(sha)) return sha;
  }
  for (const line of ((await read(join(common, "packed-refs"))) ?? "").split("\n")) {
    const [sha, name] = line.split(" ");
    if (name === ref && SHA.test(sha)) return sha;
  }
  return undefined;
}

/** The `commit=` line of a release record, if any. Pure. */
export function commitFromRelease(text: string): string | undefined {
  const line = text.split("\n").find((l) => l.startsWith("commit="));
  const value = line?.slice("commit=".length).trim();
  return value ? value : undefined;
}

/**
 * The revision this machined was built from: the image's release record on a
 * node, else `git` in the checkout it runs from (dev mode), else "unknown".
 */
export async function sourceRevision(
  options: { releaseFile?: string; sourceDir?: string } = {},
): Promise<string> {
  const release = await Deno.readTextFile(options.releaseFile ?? RELEASE_FILE).catch(() => "");
  const fromImage = commitFromRelease(release);
  if (fromImage) return fromImage;
  return (await readGitHead(options.sourceDir ?? SOURCE_DIR)) ?? "unknown";
}

/**
 * The image's version and board (`image-version=` and `board=` of the
 * release record) and the booted slot (the one `machined.slot=` on the kernel
 * command line: slotOfCmdline); empty outside an image or when it is unclear.
 */
export async function imageFacts(
  options: { releaseFile?: string; cmdline?: string } = {},
): Promise<{ imageVersion: string; slot: string; board: string }> {
  const release = await Deno.readTextFile(options.releaseFile ?? RELEASE_FILE).catch(() => "");
  const value = (key: string) =>
    release.split("\n").find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1).trim() ?? "";
  const cmdline = await Deno.readTextFile(options.cmdline ?? "/proc/cmdline").catch(() => "");
  return {
    imageVersion: value("image-version"),
    slot: slotOfCmdline(cmdline) ?? "",
    board: value("board"),
  };
}

/** The checkout above this module, or "" when it is not loaded from a file (a bundle over http). */
function sourceDirOf(moduleUrl: string): string {
  const url = new URL("..", moduleUrl);
  return url.protocol === "file:" ? fileURLToPath(url) : "";
}
