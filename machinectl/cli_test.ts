import assert from "node:assert/strict";
import { COMMANDS, runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

Deno.test("help, unknown commands and unknown flags are one clear message and exit 2", async () => {
  let io = bufferIo();
  assert.equal(await runMachinectl(["--help"], io), 0);
  assert.match(io.stdout.join("\n"), /gen config/);
  io = bufferIo();
  assert.equal(await runMachinectl(["frobnicate"], io), 2);
  assert.match(io.stderr[0], /unknown command "frobnicate"/);
  io = bufferIo();
  assert.equal(await runMachinectl(["get", "ms", "--bogus"], io), 2);
  assert.match(io.stderr[0], /^get: unknown flag "--bogus"/);
});

Deno.test("get with an unknown type lists the known types", async () => {
  const io = bufferIo();
  assert.equal(await runMachinectl(["get", "nosuchthing"], io), 1);
  assert.match(io.stderr[0], /unknown resource type "nosuchthing"; known types: .*MachineStatus/);
});

Deno.test("a missing client config is named with where it was looked for", async () => {
  const io = bufferIo();
  const code = await runMachinectl(["--config", "/nonexistent/mc.yaml", "get", "ms"], io);
  assert.equal(code, 1);
  assert.match(io.stderr[0], /no client config at "\/nonexistent\/mc.yaml"/);
});

Deno.test("validate prints every error with line:column and exits 1", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/bad.yaml`;
    await Deno.writeTextFile(file, "version: v1alpha1\nmachine:\n  hostnme: a\n  sysctls: 3\n");
    const io = bufferIo();
    assert.equal(await runMachinectl(["validate", "-c", file], io), 1);
    const text = io.stderr.join("\n");
    assert.match(text, /bad\.yaml:3:3: machine\.hostnme: .*did you mean "hostname"/);
    assert.match(text, /bad\.yaml:4:\d+: machine\.sysctls/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gen config writes a valid machine config, secrets and a client config; gen client adds roles", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let io = bufferIo();
    const code = await runMachinectl(
      ["gen", "config", "node-1", "--endpoint", "127.0.0.1", "--out", dir],
      io,
    );
    assert.equal(code, 0, io.stderr.join("\n"));
    io = bufferIo();
    assert.equal(await runMachinectl(["validate", "-c", `${dir}/machine.yaml`], io), 0);
    io = bufferIo();
    assert.equal(
      await runMachinectl(["gen", "config", "node-1", "--endpoint", "x", "--out", dir], io),
      1,
    );
    assert.match(io.stderr[0], /Refusing to overwrite/);
    io = bufferIo();
    assert.equal(
      await runMachinectl([
        "gen",
        "client",
        "--secrets",
        `${dir}/secrets.yaml`,
        "--role",
        "os:reader",
        "--name",
        "alice",
        "--endpoint",
        "127.0.0.1",
        "--out",
        `${dir}/reader.yaml`,
      ], io),
      0,
      io.stderr.join("\n"),
    );
    io = bufferIo();
    assert.equal(
      await runMachinectl(["config", "contexts", "--config", `${dir}/reader.yaml`], io),
      0,
    );
    assert.match(io.stdout[0], /\*\s+alice\s+127\.0\.0\.1:50000/);
    io = bufferIo();
    assert.equal(
      await runMachinectl([
        "gen",
        "client",
        "--role",
        "os:root",
        "--name",
        "x",
        "--endpoint",
        "127.0.0.1:50000",
        "--out",
        `${dir}/root.yaml`,
      ], io),
      1,
    );
    assert.match(io.stderr[0], /unknown role "os:root"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an unknown command is an error with a did-you-mean, whatever flags follow it", async () => {
  let io = bufferIo();
  assert.equal(await runMachinectl(["frobnicate", "--help"], io), 2);
  assert.match(io.stderr[0], /^unknown command "frobnicate"/);
  assert.deepEqual(io.stdout, [], "no top-level help on stdout");
  io = bufferIo();
  assert.equal(await runMachinectl(["evnets", "-h"], io), 2);
  assert.match(io.stderr[0], /unknown command "evnets"; did you mean "events"\?/);
  io = bufferIo();
  assert.equal(await runMachinectl(["--config", "x.yaml", "rebot", "--help"], io), 2);
  assert.match(io.stderr[0], /unknown command "rebot"; did you mean "reboot"\?/);
  io = bufferIo();
  assert.equal(await runMachinectl(["help"], io), 0);
  assert.match(io.stdout.join("\n"), /commands:/);
  io = bufferIo();
  assert.equal(await runMachinectl(["--config", "x.yaml", "--help"], io), 0);
  assert.match(io.stdout.join("\n"), /commands:/);
});

Deno.test("every command answers --help with its usage, summary and flags, exit 0", async () => {
  for (const c of COMMANDS) {
    for (const help of ["--help", "-h"]) {
      const io = bufferIo();
      assert.equal(await runMachinectl([...c.name.split(" "), help], io), 0, c.name);
      const out = io.stdout.join("\n");
      assert.ok(out.startsWith(`usage: machinectl ${c.usage}\n`), `${c.name}: ${out}`);
      assert.ok(out.includes(c.summary), c.name);
      for (const f of Object.keys(c.flags)) assert.ok(out.includes(`--${f}`), `${c.name} --${f}`);
    }
  }
});

Deno.test("every command refuses an unknown flag before doing anything: exit 2, one clear line", async () => {
  for (const c of COMMANDS) {
    for (const bogus of ["--no-such-flag", "--no-such-flag=1", "-Z"]) {
      const io = bufferIo();
      assert.equal(await runMachinectl([...c.name.split(" "), bogus], io), 2, c.name);
      assert.deepEqual(io.stdout, [], `${c.name}: nothing on stdout`);
      const flag = bogus.split("=")[0];
      assert.ok(io.stderr[0].startsWith(`${c.name}: unknown flag "${flag}"`), io.stderr[0]);
    }
  }
  const io = bufferIo();
  assert.equal(await runMachinectl(["get", "ms", "--selectr", "a=b"], io), 2);
  assert.match(io.stderr[0], /^get: unknown flag "--selectr"; did you mean "--selector"\?/);
});

Deno.test("an unknown global flag is refused, with or without a command, even beside --help", async () => {
  for (
    const argv of [["--bogus"], ["--bogus", "--help"], ["--bogus", "get", "ms"], ["-Z", "version"]]
  ) {
    const io = bufferIo();
    assert.equal(await runMachinectl(argv, io), 2, argv.join(" "));
    assert.deepEqual(io.stdout, []);
    assert.match(io.stderr[0], /unknown flag "(--bogus|-Z)"/);
  }
});

Deno.test("a refused flag leaves no trace: gen signing-key writes nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const io = bufferIo();
    const out = `${dir}/keys`;
    assert.equal(await runMachinectl(["gen", "signing-key", "--out", out, "--forse"], io), 2);
    assert.match(io.stderr[0], /unknown flag "--forse"; did you mean "--force"\?/);
    assert.equal(await Deno.stat(out).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
