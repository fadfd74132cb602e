/**
 * apt for another architecture without touching the host's apt: its own
 * sources list, lists directory, archive cache and (empty) dpkg status, with
 * `APT::Architecture` set to the target, so `apt-get download` fetches the
 * target's .deb files. Nothing is installed; the host's /etc/apt, its lists
 * and dpkg's architectures stay as they are.
 */
import { run } from "../run.ts";

/**
 * The Debian archives the private apt reads (bookworm, as the host). The
 * non-free-firmware component holds the Raspberry Pi's GPU firmware
 * (raspi-firmware); it is listed here only, never in the host's sources.
 */
export const DEBIAN_SOURCES = [
  "http://deb.debian.org/debian bookworm main non-free-firmware",
  "http://deb.debian.org/debian bookworm-updates main non-free-firmware",
  "http://deb.debian.org/debian-security bookworm-security main non-free-firmware",
] as const;

const KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg";
/** Lists older than this are refreshed before a download. */
const LISTS_MAX_AGE_MS = 24 * 3600 * 1000;

/** A private apt configuration for `arch` under `dir`. */
export class PrivateApt {
  constructor(readonly arch: string, readonly dir: string) {}

  /** The `-o` options that make apt-get use only this configuration. */
  options(): string[] {
    const d = this.dir;
    return [
      `APT::Architecture=${this.arch}`,
      `APT::Architectures::=${this.arch}`,
      `Dir::Etc::SourceList=${d}/sources.list`,
      `Dir::Etc::SourceParts=${d}/sources.list.d`,
      `Dir::Etc::Preferences=${d}/preferences`,
      `Dir::Etc::PreferencesParts=${d}/preferences.d`,
      `Dir::State::Lists=${d}/lists`,
      `Dir::State::status=${d}/status`,
      `Dir::Cache=${d}/cache`,
    ].flatMap((o) => ["-o", o]);
  }

  /** Write the configuration and run `apt-get update` when the lists are missing or old. */
  async update(): Promise<void> {
    const d = this.dir;
    for (
      const sub of ["sources.list.d", "preferences.d", "lists/partial", "cache/archives/partial"]
    ) {
      await Deno.mkdir(`${d}/${sub}`, { recursive: true });
    }
    const sources = DEBIAN_SOURCES.map((s) => `deb [signed-by=${KEYRING}] ${s}\n`).join("");
    const before = await Deno.readTextFile(`${d}/sources.list`).catch(() => "");
    await Deno.writeTextFile(`${d}/sources.list`, sources);
    if (!(await exists(`${d}/status`))) await Deno.writeTextFile(`${d}/status`, "");
    const stamp = await Deno.stat(`${d}/lists/.updated`).catch(() => undefined);
    const age = stamp?.mtime ? Date.now() - stamp.mtime.getTime() : Infinity;
    // New sources (a component added) need new lists whatever their age.
    const listed = await packageLists(`${d}/lists`);
    if (age < LISTS_MAX_AGE_MS && before === sources && listed >= DEBIAN_SOURCES.length) return;
    await withRetries(async () => {
      await run("apt-get", [...this.options(), "-qq", "update"]);
      // apt-get update exits 0 when it fetched nothing (no DNS: warnings only); a stamp then
      // would keep empty lists for a day, and every download would say "no such package".
      const lists = await packageLists(`${d}/lists`);
      if (lists < DEBIAN_SOURCES.length) {
        throw new Error(
          `apt-get update fetched ${lists} package lists of ${DEBIAN_SOURCES.length} (network?)`,
        );
      }
    });
    await Deno.writeTextFile(`${d}/lists/.updated`, "");
  }

  /**
   * `apt-get download package=version` into `outDir`; returns the .deb's path
   * (named `_all.deb` for an architecture-independent package such as
   * raspi-firmware).
   * @throws CommandError when the version is not in the archive (update the pin).
   */
  async download(pkg: string, version: string, outDir: string): Promise<string> {
    const stem = `${outDir}/${pkg}_${version.replaceAll(":", "%3a")}`;
    const names = [`${stem}_${this.arch}.deb`, `${stem}_all.deb`];
    const have = async () => {
      for (const f of names) if (await exists(f)) return f;
    };
    const cached = await have();
    if (cached) return cached;
    await this.update();
    await Deno.mkdir(outDir, { recursive: true });
    const spec = `${pkg}:${this.arch}=${version}`;
    await withRetries(() =>
      run("apt-get", [...this.options(), "-qq", "download", spec], { cwd: outDir })
    );
    const got = await have();
    if (!got) throw new Deno.errors.NotFound(`apt-get download left no ${names.join(" or ")}`);
    return got;
  }
}

/** Attempts of an apt-get call, and the pause between them. */
const APT_ATTEMPTS = 3;
const APT_RETRY_PAUSE_MS = 10_000;

/**
 * Runs `call` up to {@link APT_ATTEMPTS} times: a mirror mid-sync (hash sum
 * mismatch) or a dropped connection fails one apt-get run and not the next.
 * A version missing from the archive fails every attempt; the last error is
 * thrown, with the earlier ones as its cause.
 */
async function withRetries(call: () => Promise<unknown>): Promise<void> {
  let last: unknown;
  for (let attempt = 1; attempt <= APT_ATTEMPTS; attempt++) {
    try {
      await call();
      return;
    } catch (e) {
      if (last !== undefined && e instanceof Error && e.cause === undefined) e.cause = last;
      last = e;
      if (attempt < APT_ATTEMPTS) {
        console.error(`apt-get failed (attempt ${attempt} of ${APT_ATTEMPTS}), retrying: ${e}`);
        await new Promise((r) => setTimeout(r, APT_RETRY_PAUSE_MS));
      }
    }
  }
  throw last;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/**
 * How many package indexes apt keeps in `dir` (one per source and component: `…_Packages`,
 * compressed as apt chooses, `.lz4` on bookworm).
 */
export async function packageLists(dir: string): Promise<number> {
  let n = 0;
  for await (const e of Deno.readDir(dir)) if (e.isFile && /_Packages(\.\w+)?$/.test(e.name)) n++;
  return n;
}
