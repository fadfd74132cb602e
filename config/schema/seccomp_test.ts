import assert from "node:assert/strict";
import { parseMachineConfig } from "../parse_machine_config.ts";

/** A config with `profiles` (YAML lines under seccomp_profiles:) and a service using `use`. */
function config(profiles: string[], use = "no-mkdir"): string {
  return [
    "version: v1alpha1",
    "machine:",
    "  hostname: node-1",
    "  seccomp_profiles:",
    ...profiles,
    "  services:",
    "    - id: web",
    "      command: [/usr/bin/web]",
    `      sandbox: { seccomp: ${use} }`,
    "",
  ].join("\n");
}

const NO_MKDIR = [
  "    no-mkdir:",
  "      defaultAction: SCMP_ACT_ALLOW",
  "      architectures: [SCMP_ARCH_X86_64]",
  "      syscalls:",
  "        - names: [mkdir, mkdirat]",
  "          action: SCMP_ACT_ERRNO",
  "          errnoRet: 1",
  "        - names: [personality]",
  "          action: SCMP_ACT_KILL_PROCESS",
  "          args: [{ index: 0, value: 8, op: SCMP_CMP_NE }]",
];

function errors(text: string): string {
  const r = parseMachineConfig(text, "t.yaml");
  assert.ok(!r.ok, "expected errors, got a valid config");
  return r.errors.map((e) => e.format()).join("\n");
}

Deno.test("an OCI profile parses to what native-ops compiles; a service names it", () => {
  const r = parseMachineConfig(config(NO_MKDIR), "t.yaml");
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  assert.deepEqual(r.config.machine.seccomp_profiles["no-mkdir"], {
    defaultAction: "SCMP_ACT_ALLOW",
    architectures: ["SCMP_ARCH_X86_64"],
    syscalls: [
      { names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 1, args: [] },
      {
        names: ["personality"],
        action: "SCMP_ACT_KILL_PROCESS",
        args: [{ index: 0, value: 8, valueTwo: 0, op: "SCMP_CMP_NE" }],
      },
    ],
  });
  assert.equal(r.config.machine.services[0].sandbox.seccomp, "no-mkdir");
});

Deno.test("an unknown syscall is refused with its path, line:column and a suggestion", () => {
  const text = config(NO_MKDIR.map((l) => l.replace("mkdirat", "mkdirt")));
  const e = errors(text);
  assert.match(e, /machine\.seccomp_profiles\.no-mkdir\.syscalls\[0\]\.names\[1\]/);
  assert.match(e, /^t\.yaml:9:26: /);
  assert.match(e, /unknown syscall "mkdirt"/);
  assert.match(e, /did you mean "mkdir"\?/);
});

Deno.test("unsupported actions, comparisons and OCI keys are refused by name", () => {
  let e = errors(config(NO_MKDIR.map((l) => l.replace("SCMP_ACT_ERRNO", "SCMP_ACT_NOTIFY"))));
  assert.match(e, /syscalls\[0\]\.action/);
  assert.match(e, /invalid value "SCMP_ACT_NOTIFY"/);
  e = errors(config(NO_MKDIR.map((l) => l.replace("SCMP_CMP_NE", "SCMP_CMP_BETWEEN"))));
  assert.match(e, /args\[0\]\.op/);
  e = errors(config([...NO_MKDIR, "      listenerPath: /run/x.sock"]));
  assert.match(e, /listenerPath/);
  e = errors(config(NO_MKDIR.map((l) => l.replace("errnoRet: 1", "errnoRet: 5000"))));
  assert.match(e, /errnoRet/);
});

Deno.test("a service naming an undefined profile, and a profile named like a built-in, are refused", () => {
  let e = errors(config(NO_MKDIR, "no-mkdri"));
  assert.match(e, /machine\.services\[0\]\.sandbox\.seccomp/);
  assert.match(e, /"no-mkdri" is not defined in machine\.seccomp_profiles/);
  assert.match(e, /did you mean "no-mkdir"\?/);
  e = errors(config(NO_MKDIR.map((l) => l.replace("no-mkdir:", "default:")), "default"));
  assert.match(e, /"default" is a built-in profile/);
});
