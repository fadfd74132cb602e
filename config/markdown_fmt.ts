/**
 * Generated Markdown (docs/config.md, docs/cli.md, the budgets table in docs/api.md) is formatted
 * by the running Deno's `deno fmt` with the repository's settings, so the checked-in file and the
 * generator's output are byte for byte the same and the drift tests can compare them.
 * @module
 */

/**
 * `text` through `deno fmt --ext=md -`, run from the repository's root.
 * @throws {Error} when `deno fmt` fails (its stderr is included).
 */
export async function formatMarkdown(text: string): Promise<string> {
  const fmt = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    cwd: new URL("..", import.meta.url),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = fmt.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const { code, stdout, stderr } = await fmt.output();
  if (code !== 0) {
    throw new Error(`deno fmt failed on the generated docs: ${new TextDecoder().decode(stderr)}`);
  }
  return new TextDecoder().decode(stdout);
}
