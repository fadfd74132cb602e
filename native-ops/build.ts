/**
 * Build the native addon (`cargo build --release`) and copy it next to
 * `native-ops/mod.ts` as `machined_native_ops.node`, unless the copy is newer
 * than every crate source; then build machined-edge (native-ops/edge/, the
 * API's network edge) into native-ops/edge/target/release/machined-edge the
 * same way. `deno task native` runs it; `deno task test` runs it first so a
 * fresh checkout tests against a current addon and edge.
 *
 * Usage: `deno run -A native-ops/build.ts [--force] [--if-missing]`
 * @module
 */

const crate = new URL("./", import.meta.url);
const addon = new URL("./machined_native_ops.node", crate);
const built = new URL("./target/release/libmachined_native_ops.so", crate);

function mtime(path: URL | string): number | undefined {
  try {
    return Deno.statSync(path).mtime?.getTime();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** The newest modification time among the crate's sources. */
function newestSource(root: URL = crate): number {
  let newest = 0;
  const visit = (dir: URL) => {
    for (const entry of Deno.readDirSync(dir)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) visit(url);
      else newest = Math.max(newest, mtime(url) ?? 0);
    }
  };
  visit(new URL("./src/", root));
  for (const f of ["Cargo.toml", "Cargo.lock", "build.rs"]) {
    newest = Math.max(newest, mtime(new URL(f, root)) ?? 0);
  }
  return newest;
}

/** Whether the addon must be (re)built. */
export function needsBuild(options: { force?: boolean; ifMissing?: boolean } = {}): boolean {
  const have = mtime(addon);
  if (options.force || have === undefined) return true;
  if (options.ifMissing) return false;
  return have < newestSource();
}

/**
 * The cargo to run: the one on PATH, else rustup's default place
 * (`$CARGO_HOME/bin`, `~/.cargo/bin`), which a fresh shell may not have on PATH.
 */
export function cargoPath(env = (k: string) => Deno.env.get(k)): string {
  const dirs = (env("PATH") ?? "").split(":").filter((d) => d !== "");
  const home = env("CARGO_HOME") ?? (env("HOME") ? `${env("HOME")}/.cargo` : undefined);
  for (const dir of [...dirs, ...(home ? [`${home}/bin`] : [])]) {
    try {
      if (Deno.statSync(`${dir}/cargo`).isFile) return `${dir}/cargo`;
    } catch {
      // not here
    }
  }
  return "cargo";
}

/** Run cargo and copy the library into place. */
export async function buildAddon(): Promise<void> {
  const cargo = new Deno.Command(cargoPath(), {
    args: ["build", "--release"],
    cwd: crate,
    stdout: "inherit",
    stderr: "inherit",
  });
  const { code } = await cargo.output();
  if (code !== 0) throw new Error(`cargo build --release failed with exit code ${code}`);
  // Copy to a temporary name and rename, so a running process never maps a half-written file.
  const tmp = new URL("./machined_native_ops.node.tmp", crate);
  await Deno.copyFile(built, tmp);
  await Deno.rename(tmp, addon);
}

const edgeCrate = new URL("./edge/", crate);
/** machined-edge as cargo builds it (api/edge/edge_process_spec.ts runs it from here). */
export const EDGE_BINARY = new URL("./target/release/machined-edge", edgeCrate);

/** Whether machined-edge must be (re)built. */
export function edgeNeedsBuild(options: { force?: boolean; ifMissing?: boolean } = {}): boolean {
  const have = mtime(EDGE_BINARY);
  if (options.force || have === undefined) return true;
  if (options.ifMissing) return false;
  return have < newestSource(edgeCrate);
}

/** `cargo build --release` in native-ops/edge. */
export async function buildEdge(): Promise<void> {
  const { code } = await new Deno.Command(cargoPath(), {
    args: ["build", "--release"],
    cwd: edgeCrate,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) {
    throw new Error(`cargo build --release (native-ops/edge) failed with code ${code}`);
  }
}

if (import.meta.main) {
  const force = Deno.args.includes("--force");
  const ifMissing = Deno.args.includes("--if-missing");
  if (needsBuild({ force, ifMissing })) {
    await buildAddon();
    console.error(`native-ops: built ${addon.pathname}`);
  } else {
    console.error("native-ops: addon is up to date");
  }
  if (edgeNeedsBuild({ force, ifMissing })) {
    await buildEdge();
    console.error(`native-ops: built ${EDGE_BINARY.pathname}`);
  } else {
    console.error("native-ops: machined-edge is up to date");
  }
}
