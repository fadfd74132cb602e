/**
 * `ansible-test sanity` over the collection (issue 31): pep8, pylint,
 * validate-modules (every module's DOCUMENTATION against its argument spec),
 * yamllint and the rest, 24 tests in ansible-core 2.18, run in the plain tier.
 *
 * ansible-test bootstraps pip in each venv it makes with a script from
 * ci-files.testing.ansible.com, which this workplace cannot reach; it looks
 * for that script in its cache first. When the cache has none, this puts
 * .ci/ansible_test_get_pip.py there, with pip's wheel from PyPI beside it,
 * and never replaces a script ansible-test downloaded itself. The other
 * requirements come from PyPI. Needs .ci/ansible-venv (.ci/install.sh).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const VENV = join(ROOT, ".ci", "ansible-venv");
const ANSIBLE_TEST = join(VENV, "bin", "ansible-test");
const PYTHON = join(VENV, "bin", "python");
const SHIM = join(ROOT, ".ci", "ansible_test_get_pip.py");
const CACHE = join(Deno.env.get("HOME") ?? "/root", ".ansible", "test", "cache");

async function run(cmd: string, args: string[], cwd?: string, timeoutMs = 600_000) {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutMs),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, text };
}

/** The pip version ansible-test bootstraps, from its own source. */
async function bootstrapPipVersion(): Promise<string> {
  const r = await run(PYTHON, [
    "-c",
    "import ansible_test, os; print(os.path.dirname(ansible_test.__file__))",
  ]);
  const source = await Deno.readTextFile(
    join(r.text.trim(), "_internal", "python_requirements.py"),
  );
  const version = /pip='([\d.]+)'/.exec(source)?.[1];
  if (!version) throw new Error("cannot find the pip version ansible-test bootstraps");
  return version;
}

/** The cached bootstrap script ansible-test looks for, made from the shim when it is missing. */
async function ensureBootstrap(): Promise<void> {
  const version = await bootstrapPipVersion();
  const script = join(CACHE, `get_pip_${version.replaceAll(".", "_")}.py`);
  if (existsSync(script)) return;
  const wheels = join(CACHE, "machined-pip-wheels");
  await Deno.mkdir(wheels, { recursive: true });
  const dl = await run(PYTHON, [
    "-m",
    "pip",
    "download",
    "--quiet",
    "--no-deps",
    `pip==${version}`,
    "-d",
    wheels,
  ]);
  assert.equal(dl.code, 0, `pip download pip==${version}: ${dl.text}`);
  await Deno.copyFile(SHIM, script);
}

/** The collection where ansible-test wants it: `ansible_collections/machined/fleet`. */
async function collectionTree(dir: string): Promise<string> {
  const tree = join(dir, "ansible_collections", "machined", "fleet");
  await Deno.mkdir(tree, { recursive: true });
  const cp = await run("cp", ["-r", `${join(ROOT, "ansible")}/.`, tree]);
  assert.equal(cp.code, 0, cp.text);
  await run("find", [tree, "-name", "__pycache__", "-prune", "-exec", "rm", "-rf", "{}", "+"]);
  return tree;
}

const missing = existsSync(ANSIBLE_TEST)
  ? ""
  : " (ignored: needs .ci/ansible-venv with ansible-core; bash .ci/install.sh makes it)";

Deno.test({
  name: "ansible collection: ansible-test sanity passes (pep8, pylint, validate-modules, …)" +
    missing,
  ignore: missing !== "",
  async fn() {
    await ensureBootstrap();
    const dir = await Deno.makeTempDir({ prefix: "machined-sanity-" });
    try {
      const tree = await collectionTree(dir);
      const py = (await run(PYTHON, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]))
        .text.trim();
      const r = await run(ANSIBLE_TEST, ["sanity", "--python", py, "--local"], tree);
      const ran = r.text.match(/^Running sanity test /gm)?.length ?? 0;
      assert.equal(r.code, 0, r.text.slice(-6000));
      assert.ok(ran >= 20, `only ${ran} sanity tests ran:\n${r.text.slice(-3000)}`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
