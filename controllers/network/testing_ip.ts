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

/** Debian's dnsmasq, where installed: root tests that need it are ignored without it. */
export const DNSMASQ: string | undefined = ["/usr/sbin/dnsmasq", "/usr/bin/dnsmasq"].find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

/** Join two test namespaces with a veth pair: `mc0` in `client`, `ms0` in `server`. */
export async function addVethPair(client: string, server: string): Promise<void> {
  await ip(
    "link",
    "add",
    "mc0",
    "netns",
    client,
    "type",
    "veth",
    "peer",
    "name",
    "ms0",
    "netns",
    server,
  );
}

/**
 * Run a test file with `deno test` inside `netns` (MACHINED_NETNS names it to
 * the suite), bounded to two minutes; returns its success and combined output.
 */
export async function testInNamespace(
  netns: string,
  suite: URL,
): Promise<{ success: boolean; text: string }> {
  const out = await new Deno.Command("ip", {
    args: ["netns", "exec", netns, Deno.execPath(), "test", "-A", "--no-check", suite.pathname],
    env: { MACHINED_NETNS: netns, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { success: out.success, text };
}

/** SIGTERM a server spawned with piped stderr and return that stderr (its log). */
export async function stopForLog(server: Deno.ChildProcess): Promise<string> {
  server.kill("SIGTERM");
  return new TextDecoder().decode((await server.output()).stderr);
}
