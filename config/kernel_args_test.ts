import assert from "node:assert/strict";
import {
  applyKernelArgs,
  applyRecordedKernelArgs,
  checkCmdlineSize,
  COMMAND_LINE_SIZE,
  kernelArgProblem,
  KernelArgsError,
  kernelArgsState,
  readKernelArgsRecord,
} from "./kernel_args.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";
import { applyClassOf } from "./apply_class.ts";
import { kernelCmdline } from "../imager/mod.ts";

const LINE = "console=ttyS0,115200 panic=10 quiet loglevel=3 rdinit=/sbin/machined-init " +
  "DENO_DIR=/d -- /usr/bin/deno run -A quiet";

Deno.test("applyKernelArgs adds before --, removes by word or key, and leaves init's argv alone", () => {
  const out = applyKernelArgs(LINE, {
    add: ["nosmt", "console=tty0"],
    remove: ["quiet", "loglevel"],
  });
  assert.equal(
    out,
    "console=ttyS0,115200 panic=10 rdinit=/sbin/machined-init DENO_DIR=/d nosmt console=tty0 " +
      "-- /usr/bin/deno run -A quiet",
  );
  assert.equal(applyKernelArgs(LINE, undefined), LINE);
  assert.equal(applyKernelArgs(LINE, { add: ["quiet"], remove: [] }), LINE, "present: not twice");
  assert.equal(
    applyKernelArgs("a loglevel=3 loglevel=7", { add: [], remove: ["loglevel=7"] }),
    "a loglevel=3",
  );
  assert.equal(applyKernelArgs("a b", { add: ["c"], remove: [] }), "a b c", "no -- at all");
});

Deno.test("the node's words are refused in add and remove; console= may be added, never removed", () => {
  for (const w of ["machined.slot=B", "machined.root.verity=x", "root=/dev/sda", "init=/bin/sh"]) {
    assert.match(kernelArgProblem(w)!, /the node's to write/, w);
    assert.match(kernelArgProblem(w, true)!, /the node's to write/, w);
  }
  for (const w of ["rdinit=/x", "panic=0", "DENO_DIR=/tmp", "--"]) {
    assert.ok(kernelArgProblem(w), w);
  }
  assert.equal(kernelArgProblem("console=tty0"), undefined);
  assert.match(kernelArgProblem("console", true)!, /cannot be removed/);
  assert.match(kernelArgProblem("a b")!, /printable ASCII/);
  assert.match(kernelArgProblem("a\nb")!, /printable ASCII/);
  assert.match(kernelArgProblem("x=" + "y".repeat(300))!, /at most 256/);
  assert.throws(
    () => applyKernelArgs(LINE, { add: [], remove: ["machined.slot"] }),
    KernelArgsError,
  );
});

Deno.test("checkCmdlineSize keeps COMMAND_LINE_SIZE - 1 bytes and refuses one more", () => {
  const max = "a".repeat(COMMAND_LINE_SIZE - 1);
  assert.equal(checkCmdlineSize(max), max);
  assert.throws(() => checkCmdlineSize(max + "a"), /COMMAND_LINE_SIZE/);
});

Deno.test("kernelArgsState shows what the booted line lacks, and nothing once it is booted", () => {
  const args = { add: ["nosmt", "console=tty0"], remove: ["quiet"] };
  const s = kernelArgsState(args, "console=ttyS0 quiet machined.slot=A -- deno nosmt\n");
  assert.deepEqual(s.pending, ["nosmt", "console=tty0", "-quiet"]);
  assert.equal(s.rebootRequired, true);
  assert.deepEqual(s.booted, ["console=ttyS0", "quiet", "machined.slot=A"]);
  const after = kernelArgsState(args, "console=ttyS0 machined.slot=B nosmt console=tty0 -- deno");
  assert.deepEqual(after.pending, []);
  assert.equal(after.rebootRequired, false);
});

function config(args: string): string {
  return `version: v1alpha1\nmachine:\n  hostname: n\n  kernel:\n    args:\n${args}\n`;
}

Deno.test("machine.kernel.args: parsed with defaults, and a node word refused with path and line:column", () => {
  const ok = parseMachineConfig(config("      add: [nosmt]"), "t.yaml");
  assert.ok(ok.ok, ok.ok ? "" : ok.errors.map((e) => e.format()).join("\n"));
  assert.deepEqual(ok.config.machine.kernel.args, { add: ["nosmt"], remove: [] });
  const bad = parseMachineConfig(config("      add: [nosmt, machined.slot=B]"), "t.yaml");
  assert.ok(!bad.ok);
  const text = bad.errors.map((e) => e.format()).join("\n");
  assert.match(text, /machine\.kernel\.args\.add\[1\]/);
  assert.match(text, /t\.yaml:6:\d+/);
  assert.match(text, /the node's to write/);
  const rm = parseMachineConfig(config("      remove: [console]"), "t.yaml");
  assert.ok(!rm.ok);
  assert.match(rm.errors.map((e) => e.format()).join("\n"), /cannot be removed/);
});

Deno.test("a change to machine.kernel.args applies live (written into the booted entry); modules too", () => {
  assert.deepEqual(applyClassOf("machine.kernel.args"), { live: true });
  assert.deepEqual(applyClassOf("machine.kernel.args.add"), { live: true });
  assert.deepEqual(applyClassOf("machine.kernel.modules"), { live: true });
});

Deno.test("applyRecordedKernelArgs: a record undoes what the last config changed, and is idempotent", () => {
  const line = "console=ttyS0 quiet machined.slot=A -- --v8";
  const one = applyRecordedKernelArgs(line, { add: ["nosmt"], remove: ["quiet"] });
  assert.deepEqual(readKernelArgsRecord(one), { add: ["nosmt"], remove: ["quiet"] });
  assert.match(one, /^console=ttyS0 machined\.slot=A nosmt machined\.args=[A-Za-z0-9_-]+ -- --v8$/);
  assert.equal(applyRecordedKernelArgs(one, { add: ["nosmt"], remove: ["quiet"] }), one);
  // nosmt dropped from add leaves; quiet dropped from remove comes back; no record is left.
  assert.equal(
    applyRecordedKernelArgs(one, { add: [], remove: [] }),
    "console=ttyS0 machined.slot=A quiet -- --v8",
  );
  // A word the line had before machined (the image's) is never taken by an undo.
  const two = applyRecordedKernelArgs(line, { add: ["quiet", "a=1"], remove: [] });
  assert.deepEqual(readKernelArgsRecord(two), { add: ["a=1"], remove: [] });
  assert.equal(applyRecordedKernelArgs(two, { add: [], remove: [] }), line);
  assert.equal(readKernelArgsRecord("machined.args=%%% x"), undefined);
  assert.throws(
    () => applyRecordedKernelArgs(line, { add: ["machined.args=x"], remove: [] }),
    /node's to write/,
  );
});

Deno.test("the image's transparent_hugepage=never can be replaced by an operator's choice", () => {
  const line = kernelCmdline({ program: "js" });
  assert.match(line, / transparent_hugepage=never /);
  const out = applyKernelArgs(line, {
    add: ["transparent_hugepage=madvise"],
    remove: ["transparent_hugepage"],
  });
  const before = out.split(" -- ")[0].split(" ");
  assert.deepEqual(before.filter((w) => w.startsWith("transparent_hugepage")), [
    "transparent_hugepage=madvise",
  ]);
  assert.equal(kernelArgProblem("transparent_hugepage", true), undefined);
});
