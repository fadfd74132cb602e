import assert from "node:assert/strict";
import { validateCommand } from "./validate_command.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

Deno.test("validate prints ok or every error and returns the exit code", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = `${dir}/good.yaml`;
    const bad = `${dir}/bad.yaml`;
    await Deno.writeTextFile(good, "version: v1alpha1\nmachine:\n  hostname: node-1\n");
    await Deno.writeTextFile(bad, "version: v1alpha1\nmachine:\n  hostnme: node-1\n  mtu: 1\n");

    const ok = capture();
    assert.equal(await validateCommand([good], ok.output), 0);
    assert.deepEqual(ok.out, [`${good}: ok`]);
    assert.deepEqual(ok.err, []);

    const ko = capture();
    assert.equal(await validateCommand([good, bad], ko.output), 1);
    assert.deepEqual(ko.out, [`${good}: ok`]);
    assert.deepEqual(ko.err, [
      [
        `${bad}:3:3: machine.hostnme: unknown key "hostnme" (did you mean "hostname"?)`,
        `${bad}:4:3: machine.mtu: unknown key "mtu" (allowed keys: hostname, domainname, install, network, time, sysctls, kernel, trusted_roots, seccomp_profiles, services, runtime, api, ca, logging, upgrade)`,
      ].join("\n"),
      `${bad}: 2 errors`,
    ]);

    const missing = capture();
    assert.equal(await validateCommand([`${dir}/absent.yaml`], missing.output), 1);
    assert.match(missing.err[0], /absent\.yaml: cannot read config file/);

    const none = capture();
    assert.equal(await validateCommand([], none.output), 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
