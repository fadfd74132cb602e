/**
 * Test support for apid as its own process: spawned from the same spec the
 * supervisor uses (clear environment, stdout piped), its port read from the
 * ready line it prints first. Shared by the tests that measure or limit a
 * real apid process. Not for production.
 */
import { withTimeout } from "../testing.ts";
import { apidProcessSpec, type ApidProcessSpecOptions } from "./apid_process_spec.ts";

/** apid spawned from `options`; `port()` waits (30 s) for its ready line, `stop()` ends it. */
export function spawnApid(options: ApidProcessSpecOptions) {
  const spec = apidProcessSpec(options);
  const child = new Deno.Command(spec.argv[0], {
    args: spec.argv.slice(1),
    env: spec.env,
    clearEnv: true,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  return {
    pid: child.pid,
    /** The port from apid's first stdout line. */
    async port(): Promise<number> {
      const first = await withTimeout(lines.read(), 30_000, "apid ready");
      return (JSON.parse(first.value!.split("\n")[0]) as { port: number }).port;
    },
    /** SIGTERM, wait for the exit, release stdout. */
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await lines.cancel().catch(() => {});
    },
  };
}
