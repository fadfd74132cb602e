/**
 * `ip` (iproute2) for privileged tests that build throwaway namespaces and
 * veth pairs. Dependency-free, so a root test can import it at top level and
 * still be ignored by name where the native addon is missing.
 * @module
 */

/** Run `ip` and return its stdout. @throws Error with its stderr when it fails. */
export async function ip(...args: string[]): Promise<string> {
  const out = await new Deno.Command("ip", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`ip ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return text;
}
