import { equal } from "node:assert/strict";
import { join } from "node:path";
import { commitFromRelease, readGitHead, sourceRevision } from "./version.ts";
import { sourceRevisionOf } from "../imager/mod.ts";
import { nodeActions } from "../node/mod.ts";
import { createLogger } from "../logs/mod.ts";

const REPO = new URL("..", import.meta.url).pathname;
const SHA = "0123456789abcdef0123456789abcdef01234567";

async function git(...args: string[]): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("git", { args: ["-C", REPO, ...args], stderr: "null" })
      .output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}
const HEAD = await git("rev-parse", "HEAD");

Deno.test("the image's release record names the commit", async () => {
  equal(commitFromRelease(`deno=deno 2.9.3\ncommit=${SHA}\nkernel=k\n`), SHA);
  equal(commitFromRelease("kernel=k\n"), undefined);
  const dir = await Deno.makeTempDir();
  try {
    const releaseFile = join(dir, "release");
    await Deno.writeTextFile(releaseFile, `commit=${SHA}-dirty\n`);
    equal(await sourceRevision({ releaseFile, sourceDir: dir }), `${SHA}-dirty`);
    equal(await sourceRevision({ releaseFile: join(dir, "none"), sourceDir: dir }), "unknown");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HEAD is read from git metadata: a ref, packed-refs, a detached HEAD", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, ".git/refs/heads"), { recursive: true });
    await Deno.writeTextFile(join(dir, ".git/HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(
      join(dir, ".git/packed-refs"),
      `# pack-refs\n${SHA} refs/heads/main\n`,
    );
    equal(await readGitHead(dir), SHA);
    const loose = SHA.replace("0123", "4567");
    await Deno.writeTextFile(join(dir, ".git/refs/heads/main"), `${loose}\n`);
    equal(await readGitHead(dir), loose);
    await Deno.writeTextFile(join(dir, ".git/HEAD"), `${SHA}\n`);
    equal(await readGitHead(dir), SHA);
    equal(await readGitHead(join(dir, ".git")), undefined, "not a checkout");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "dev mode and the imager report this checkout's HEAD (needs git)",
  ignore: HEAD === undefined,
  async fn() {
    equal(await readGitHead(REPO), HEAD);
    equal(await sourceRevision({ releaseFile: "/nonexistent", sourceDir: REPO }), HEAD);
    const dirty = (await git("status", "--porcelain", "--untracked-files=no")) !== "";
    equal(await sourceRevisionOf(REPO), dirty ? `${HEAD}-dirty` : HEAD);
    const actions = nodeActions({
      hostname: () => "h",
      logger: createLogger({ console: false }),
      onPower: () => {},
      commit: () => sourceRevision({ releaseFile: "/nonexistent", sourceDir: REPO }),
    });
    equal((await actions.version()).commit, HEAD);
  },
});
