/**
 * Warmed Deno caches kept by what they are made from, so an image build
 * whose program, Deno and flags were warmed before copies the result instead
 * of running Deno twice again. Under qemu-user (an arm64 image built on
 * x86_64) a warm takes minutes, and a test tier builds the same program into
 * several images (versions X and Y of an upgrade, the arm64 node and the Pi
 * 3). The key covers every input warmDenoDir reads: the program's bytes, the
 * Deno binary's bytes, the runner's words, the node path and the V8 flags,
 * so a hit gives the bytes a fresh warm would (warmDenoDir is reproducible:
 * code_cache_test.ts). An entry is written to a temporary name and renamed
 * into place, so a crash never leaves half of one.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { warmDenoDir, type WarmOptions, type WarmResult } from "./code_cache.ts";
import { hashFile } from "../bundle/mod.ts";

/** Bumped when warmDenoDir's output changes for the same inputs. */
const STORE_FORMAT = "1";

/** The store's key for `o`: a SHA-256 over every input of the warm. */
export async function warmKey(o: WarmOptions): Promise<string> {
  const h = createHash("sha256");
  const part = (s: string) => h.update(`${s.length}:${s}\n`);
  part(STORE_FORMAT);
  part((await hashFile(o.program)).sha256);
  part((await hashFile(o.deno)).sha256);
  part(JSON.stringify(o.runner ?? []));
  part(o.nodePath);
  part(JSON.stringify(o.v8Flags ?? []));
  return h.digest("hex");
}

/**
 * {@link warmDenoDir}, through the store at `storeDir`: a hit copies the
 * stored caches into `o.denoDir`; a miss warms and stores the result.
 * @throws CommandError as warmDenoDir (nothing is stored then).
 */
export async function warmDenoDirStored(
  o: WarmOptions,
  storeDir: string,
): Promise<WarmResult & { reused: boolean }> {
  const entry = join(storeDir, await warmKey(o));
  const stored = await readResult(entry);
  if (stored) {
    await copyFlat(join(entry, "deno"), o.denoDir);
    return { ...stored, denoDir: await Deno.realPath(o.denoDir), reused: true };
  }
  const r = await warmDenoDir(o);
  const tmp = `${entry}.tmp-${Deno.pid}`;
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  await copyFlat(r.denoDir, join(tmp, "deno"));
  const { denoDir: _, ...facts } = r;
  await Deno.writeTextFile(join(tmp, "result.json"), JSON.stringify(facts) + "\n");
  // Only an unreadable entry is removed: a good one may be in use by another build (CI runs
  // two image builds at once, .ci/e2e_lanes.sh), and one stored meanwhile holds the same caches.
  if (!(await readResult(entry))) await Deno.remove(entry, { recursive: true }).catch(() => {});
  await Deno.rename(tmp, entry).catch(async (e) => {
    if (!(await readResult(entry))) throw e;
    await Deno.remove(tmp, { recursive: true }); // another build stored the same key first
  });
  return { ...r, reused: false };
}

async function readResult(entry: string): Promise<Omit<WarmResult, "denoDir"> | undefined> {
  try {
    const r = JSON.parse(await Deno.readTextFile(join(entry, "result.json")));
    return typeof r.codeCacheEntries === "number" && typeof r.programCached === "boolean" &&
        typeof r.bytes === "number"
      ? r
      : undefined;
  } catch {
    return undefined;
  }
}

/** Replace `to` with a copy of the files directly in `from` (a DENO_DIR holds only files). */
async function copyFlat(from: string, to: string): Promise<void> {
  await Deno.remove(to, { recursive: true }).catch(() => {});
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isFile) await Deno.copyFile(join(from, e.name), join(to, e.name));
  }
}
