/**
 * Builds machined-init (native-ops/init), the tiny program the kernel starts as
 * PID 1: it mounts /proc, /sys and /dev, verifies and mounts the slot's
 * read-only root image and switches into it, then execs Deno. Built with cargo when
 * missing or older than its sources.
 */
import { run } from "./run.ts";

const CRATE = new URL("../native-ops/init/", import.meta.url);
const BINARY = new URL("./target/release/machined-init", CRATE);

/** Returns the path of a current machined-init binary, building it if needed. */
export async function buildInit(): Promise<string> {
  const built = await mtime(BINARY);
  let sources = await mtime(new URL("./Cargo.toml", CRATE)) ?? 0;
  for await (const e of Deno.readDir(new URL("./src/", CRATE))) {
    sources = Math.max(sources, await mtime(new URL(`./src/${e.name}`, CRATE)) ?? 0);
  }
  if (built === undefined || built < sources) {
    await run("cargo", [
      "build",
      "--release",
      "--manifest-path",
      new URL("./Cargo.toml", CRATE).pathname,
    ]);
  }
  return BINARY.pathname;
}

async function mtime(url: URL): Promise<number | undefined> {
  try {
    return (await Deno.stat(url)).mtime?.getTime();
  } catch {
    return undefined;
  }
}
