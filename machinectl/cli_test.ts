import assert from "node:assert/strict";
import { runMachinectl } from "./cli.ts";
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
  assert.match(io.stderr[0], /get: Unknown option '--bogus'/);
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
      await runMachinectl(["gen", "client", "--role", "os:root", "--name", "x"], io),
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
