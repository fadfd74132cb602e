import assert from "node:assert/strict";
import { parseMachineConfig } from "./parse_machine_config.ts";
import { encryptionWarnings } from "./encryption_checks.ts";

const SECRET = "correct-horse-battery";

/** A config whose STATE keys are the given flow-style entries. */
const config = (...keys: string[]) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n  install:\n    disk: /dev/vda\n` +
  `    encryption:\n      state:\n        keys:\n${keys.map((k) => `          - ${k}\n`).join("")}`;

function errors(text: string): string[] {
  const result = parseMachineConfig(text, "t.yaml");
  assert.ok(!result.ok, "expected errors, got a valid config");
  return result.errors.map((e) => e.format());
}

Deno.test("a static and a nodeid key are accepted, with the defaults filled in", () => {
  const r = parseMachineConfig(
    config(`{ slot: 0, kind: static, passphrase: ${SECRET} }`, "{ slot: 1, kind: nodeid }"),
    "t.yaml",
  );
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  const state = r.config.machine.install?.encryption?.state;
  assert.equal(state?.cipher, "aes-xts-plain64");
  assert.equal(state?.sector_size, 4096);
  assert.equal(state?.allow_discards, false);
  assert.deepEqual(state?.keys.map((k) => k.kind), ["static", "nodeid"]);
});

Deno.test("a volume whose only keys are tpm is refused: the node could lose them", () => {
  const e = errors(config("{ slot: 0, kind: tpm }"));
  assert.equal(e.length, 1);
  assert.match(e[0], /machine\.install\.encryption\.state\.keys: every key is tpm/);
  assert.match(e[0], /add a static key/);
  assert.doesNotMatch(e[0], /not implemented/);
  const two = errors(config("{ slot: 0, kind: tpm }", "{ slot: 1, kind: tpm }"));
  assert.equal(two.length, 1);
});

Deno.test("a tpm key beside a nodeid one is accepted", () => {
  const r = parseMachineConfig(config("{ slot: 0, kind: nodeid }", "{ slot: 1, kind: tpm }"), "t");
  assert.ok(r.ok);
});

Deno.test("a tpm key beside a static one is accepted with a warning that says why", () => {
  const text = config(`{ slot: 0, kind: static, passphrase: ${SECRET} }`, "{ slot: 1, kind: tpm }");
  assert.ok(parseMachineConfig(text, "t.yaml").ok);
  const w = encryptionWarnings({
    install: { encryption: { state: { keys: [{ kind: "static" }, { kind: "tpm" }] } } },
  });
  assert.equal(w.length, 1);
  assert.equal(w[0].path, "machine.install.encryption.state.keys[1]");
  assert.match(w[0].message, /TPM is cleared/);
  assert.match(w[0].message, /other keys open the volume/);
  assert.doesNotMatch(w[0].message, /not implemented/);
});

Deno.test("duplicate slots, a static key without passphrase, a passphrase on nodeid", () => {
  const e = errors(config(
    "{ slot: 0, kind: static }",
    `{ slot: 0, kind: nodeid, passphrase: ${SECRET} }`,
  ));
  assert.equal(e.length, 3, e.join("\n"));
  assert.ok(e.some((x) => /keys\[1\]\.slot: key slot 0 is used twice/.test(x)));
  assert.ok(e.some((x) => /keys\[0\]: a static key needs a passphrase/.test(x)));
  assert.ok(e.some((x) => /keys\[1\]\.passphrase: only static keys take a passphrase/.test(x)));
});

Deno.test("a passphrase is never quoted in an error", () => {
  for (const bad of ["short", `${SECRET}\u0000`]) {
    const text = config(`{ slot: 0, kind: static, passphrase: ${JSON.stringify(bad)} }`) +
      "        cipher: rot13\n";
    const e = errors(text).join("\n");
    assert.ok(!e.includes(bad.slice(0, 5)), e);
  }
  const e = errors(config(`{ slot: 0, kind: static, passphrase: "abc" }`)).join("\n");
  assert.match(e, /passphrase/);
  assert.ok(!e.includes('"abc"'), e);
});

Deno.test("the passphrase is a secret path: redacted wherever the config is shown", async () => {
  const { SECRET_PATHS } = await import("./secrets.ts");
  assert.ok(
    SECRET_PATHS.some((p) => p.join(".") === "machine.install.encryption.state.keys.*.passphrase"),
  );
});
