import assert from "node:assert/strict";
import { parseMachineConfig } from "../parse_machine_config.ts";

/** A config with one service whose sandbox block is `sandbox` (YAML lines under `sandbox:`). */
function config(sandbox?: string): string {
  return [
    "version: v1alpha1",
    "machine:",
    "  hostname: node-1",
    "  services:",
    "    - id: web",
    "      command: [/usr/bin/web]",
    ...(sandbox === undefined ? [] : ["      sandbox:", sandbox]),
    "",
  ].join("\n");
}

function parsed(text: string) {
  const r = parseMachineConfig(text, "t.yaml");
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  return r.config.machine.services[0].sandbox;
}

function errors(text: string): string[] {
  const r = parseMachineConfig(text, "t.yaml");
  assert.ok(!r.ok, "expected errors, got a valid config");
  return r.errors.map((e) => e.format());
}

Deno.test("a service without a sandbox gets the default profile, no capabilities, no_new_privs", () => {
  assert.deepEqual(parsed(config()), {
    seccomp: "default",
    capabilities: [],
    no_new_privs: true,
    read_only_paths: [],
    masked_paths: [],
  });
});

Deno.test("a sandbox may keep capabilities and opt out of the filter; duplicates collapse", () => {
  const s = parsed(config(
    "        seccomp: unconfined\n        capabilities: [CAP_NET_BIND_SERVICE, CAP_NET_RAW, CAP_NET_RAW]",
  ));
  assert.deepEqual(s, {
    seccomp: "unconfined",
    capabilities: ["CAP_NET_BIND_SERVICE", "CAP_NET_RAW"],
    no_new_privs: true,
    read_only_paths: [],
    masked_paths: [],
  });
  assert.equal(parsed(config("        no_new_privs: false")).no_new_privs, false);
});

Deno.test("an unknown profile is refused with its path, position and the nearest name", () => {
  const [e, ...rest] = errors(config("        seccomp: defualt"));
  assert.deepEqual(rest, []);
  assert.match(
    e,
    /^t\.yaml:8:18: machine\.services\[0\]\.sandbox\.seccomp: seccomp profile "defualt" is not defined in machine\.seccomp_profiles/,
  );
  assert.match(e, /did you mean "default"\?/);
});

Deno.test("capability names are the kernel's, with a hint for other spellings", () => {
  const errs = errors(
    config("        capabilities: [net_bind_service, CAP_SYS_ADMN, CAP_BOGUS_THING]"),
  );
  assert.equal(errs.length, 3, errs.join("\n"));
  assert.match(
    errs[0],
    /^t\.yaml:8:24: machine\.services\[0\]\.sandbox\.capabilities\[0\]: unknown capability "net_bind_service"/,
  );
  assert.match(errs[0], /write "CAP_NET_BIND_SERVICE"/);
  assert.match(
    errs[1],
    /capabilities\[1\]: unknown capability "CAP_SYS_ADMN".*did you mean "CAP_SYS_ADMIN"\?/s,
  );
  assert.match(errs[2], /capabilities\[2\]: unknown capability "CAP_BOGUS_THING"/);
});

Deno.test("unknown sandbox keys are refused", () => {
  const [e] = errors(config("        hidden_paths: [/etc]"));
  assert.match(e, /machine\.services\[0\]\.sandbox/);
  assert.match(e, /hidden_paths/);
});

Deno.test("read_only_paths: absolute, no . or .., bounded; trailing slashes and duplicates collapse", () => {
  assert.deepEqual(
    parsed(config("        read_only_paths: [/etc/, /etc, /var/lib/x]")).read_only_paths,
    ["/etc", "/var/lib/x"],
  );
  for (const bad of ["etc", "/var/../etc", "/a/./b"]) {
    const [e] = errors(config(`        read_only_paths: ["${bad}"]`));
    assert.match(e, /machine\.services\[0\]\.sandbox\.read_only_paths\[0\]/, bad);
    assert.match(e, /t\.yaml:\d+:\d+/, bad);
    assert.match(e, /absolute, without \. or \.\./, bad);
  }
  const many = Array.from({ length: 33 }, (_, i) => `/p${i}`).join(", ");
  assert.match(errors(config(`        read_only_paths: [${many}]`))[0], /at most 32/);
});

Deno.test("masked_paths: absolute paths, deduplicated; a relative one is refused with its path", () => {
  const s = parsed(config("        masked_paths: [/proc/kcore, /var/lib/secrets/, /proc/kcore]"));
  assert.deepEqual(s.masked_paths, ["/proc/kcore", "/var/lib/secrets"]);
  const [e] = errors(config("        masked_paths: [etc/x]"));
  assert.match(
    e,
    /machine\.services\[0\]\.sandbox\.masked_paths\[0\]: invalid masked path "etc\/x"/,
  );
});
