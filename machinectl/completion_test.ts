import assert from "node:assert/strict";
import { COMMANDS, runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

async function script(shell: string): Promise<string> {
  const io = bufferIo();
  assert.equal(await runMachinectl(["completion", shell], io), 0, io.stderr.join("\n"));
  return io.stdout.join("\n") + "\n";
}

const hasBash = await new Deno.Command("bash", { args: ["-c", "true"] }).output()
  .then((o) => o.success, () => false);

async function bash(source: string, command: string): Promise<string> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/c.bash`, source);
    const o = await new Deno.Command("bash", {
      args: ["-c", `source ${dir}/c.bash\n${command}`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(o.stderr);
    assert.ok(o.success, err);
    return new TextDecoder().decode(o.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** What `_machinectl` offers for the words typed so far (the last is being completed). */
function complete(...words: string[]): string {
  const quoted = words.map((w) => `'${w}'`).join(" ");
  return `COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _machinectl; ` +
    `echo "\${COMPREPLY[*]}"`;
}

Deno.test("completion refuses an unknown shell", async () => {
  const io = bufferIo();
  assert.equal(await runMachinectl(["completion", "tcsh"], io), 2);
  assert.match(io.stderr[0], /bash, zsh, fish/);
});

Deno.test({
  name: "completion bash parses (bash -n) and registers _machinectl",
  ignore: !hasBash,
  async fn() {
    const s = await script("bash");
    await bash(s, "true");
    const o = await new Deno.Command("bash", { args: ["-n"], stdin: "piped" }).spawn();
    const w = o.stdin.getWriter();
    await w.write(new TextEncoder().encode(s));
    await w.close();
    assert.ok((await o.status).success, "bash -n");
    assert.equal(
      (await bash(s, "complete -p machinectl")).trim(),
      "complete -o default -F _machinectl machinectl",
    );
  },
});

Deno.test({
  name: "completion bash: commands, subcommands, flags, -o values and get's resource types",
  ignore: !hasBash,
  async fn() {
    const s = await script("bash");
    const words = async (...w: string[]) => (await bash(s, complete(...w))).trim().split(/\s+/);
    assert.deepEqual(await words("machinectl", "ge"), ["get", "gen"]);
    assert.deepEqual(await words("machinectl", "gen", ""), [
      "config",
      "client",
      "signing-key",
      "secureboot-keys",
    ]);
    assert.deepEqual(await words("machinectl", "get", "ms", "--name"), ["--namespace"]);
    assert.deepEqual(await words("machinectl", "-n", "node1", "get", "MachineS"), [
      "MachineStatus",
    ]);
    assert.deepEqual(await words("machinectl", "get", "ms", "-o", "y"), ["yaml"]);
    assert.deepEqual(await words("machinectl", "completion", "f"), ["fish"]);
    // Every enum flag offers its own command's words, and only there.
    assert.deepEqual(await words("machinectl", "health", "-o", ""), ["table", "json"]);
    assert.deepEqual(await words("machinectl", "ps", "--sort", "c"), ["cpu"]);
    assert.deepEqual(await words("machinectl", "apply-config", "--mode", "t"), ["try"]);
    assert.deepEqual(await words("machinectl", "reboot", "--mode", "t"), [""]);
    assert.deepEqual(await words("machinectl", "gen", "signing-key", "--f"), ["--force"]);
    // Every command's every flag is offered after it.
    for (const c of COMMANDS) {
      const offered = await words("machinectl", ...c.name.split(" "), "--");
      for (const f of Object.keys(c.flags)) {
        assert.ok(offered.includes(`--${f}`), `${c.name} --${f}`);
      }
    }
  },
});

Deno.test("completion zsh wraps the bash script; fish lists every command and flag", async () => {
  const zsh = await script("zsh");
  assert.ok(zsh.startsWith("#compdef machinectl\n"));
  assert.match(zsh, /bashcompinit/);
  assert.ok(zsh.includes(await script("bash")));
  const fish = await script("fish");
  for (const c of COMMANDS) {
    assert.match(fish, new RegExp(`-a ${c.name.split(" ").at(-1)} `), c.name);
    for (const f of Object.keys(c.flags)) assert.ok(fish.includes(` -l ${f}`), `${c.name} ${f}`);
  }
  assert.match(fish, /-a "[^"]*MachineStatus/);
  assert.match(fish, / -l output -s o -xa "table json yaml" /);
});
