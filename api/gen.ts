/**
 * `deno task gen`: `buf lint`, then `buf generate` (api/gen from api/proto).
 * `deno run -A api/gen.ts cri` does the same for cri/ (cri/gen from cri/proto).
 *
 * buf starts the protoc-gen-es plugin as `deno run ...` (api/buf.gen.yaml) by a
 * PATH lookup. On a fresh clone Deno lives only in .ci/bin, not on PATH, so the
 * directory of the Deno running this script goes first on buf's PATH: the
 * plugin then runs with the same Deno, wherever it is installed.
 *
 * @module
 */
import { dirname } from "node:path";

/** The pinned buf CLI, run from the npm cache (offline once cached). */
export const BUF = "npm:@bufbuild/buf@1.75.0";

/** What one buf command printed and how it exited. */
export interface BufResult {
  code: number;
  /** stdout then stderr, for an assertion message or the terminal. */
  text: string;
}

/** PATH for buf and its plugins: the running Deno's directory first. */
export function pathWithDeno(path = Deno.env.get("PATH") ?? ""): string {
  return [dirname(Deno.execPath()), ...path.split(":").filter((p) => p !== "")].join(":");
}

/** Run `buf <args>` in `cwd` (a directory holding buf.yaml and buf.gen.yaml). */
export async function runBuf(args: string[], cwd: string): Promise<BufResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BUF, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", PATH: pathWithDeno() },
  }).output();
  const td = new TextDecoder();
  return { code: out.code, text: td.decode(out.stdout) + td.decode(out.stderr) };
}

if (import.meta.main) {
  // A directory holding buf.yaml and buf.gen.yaml, relative to the repository.
  const dir = new URL(`../${Deno.args[0] ?? "api"}/`, import.meta.url).pathname;
  for (const cmd of ["lint", "generate"]) {
    const r = await runBuf([cmd], dir);
    if (r.text) console.log(r.text.trimEnd());
    if (r.code !== 0) {
      console.error(`buf ${cmd} failed (exit ${r.code})`);
      Deno.exit(r.code);
    }
  }
}
