/**
 * The git revision an image is built from, written into its release record
 * (`/etc/machined/release`, `commit=`) so the node's Version RPC reports it.
 * The imager runs on the build host, where running git is fine.
 */

/** Where the imager's own sources are: the checkout machined is built from. */
const REPO_DIR = new URL("..", import.meta.url).pathname;

/**
 * `git rev-parse HEAD` of `dir`, with `-dirty` when tracked files differ from
 * it; "unknown" when `dir` is not a git checkout or git is missing.
 */
export async function sourceRevisionOf(dir: string = REPO_DIR): Promise<string> {
  const git = async (...args: string[]) => {
    const out = await new Deno.Command("git", {
      args: ["-C", dir, ...args],
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
  };
  try {
    const head = await git("rev-parse", "--verify", "HEAD");
    if (!head) return "unknown";
    const changes = await git("status", "--porcelain", "--untracked-files=no");
    return changes ? `${head}-dirty` : head;
  } catch {
    return "unknown"; // no git on this host
  }
}
