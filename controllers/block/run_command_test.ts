import assert from "node:assert/strict";
import { FakeProcessBackend } from "../../platform/process/mod.ts";
import { SysError } from "../../native-ops/mod.ts";
import { mkfsArgv } from "./mkfs.ts";
import { ProvisionError, toVolumeError } from "./provision_error.ts";
import { CommandError, runCommand, TOOL_PATH } from "./run_command.ts";

Deno.test("runCommand collects output and fails with a CommandError carrying stderr", async () => {
  const p = new FakeProcessBackend()
    .define("ok", (x) => {
      x.writeLine("stdout", "made");
      x.exit(0);
    })
    .define("bad", (x) => {
      x.writeLine("stderr", "device is busy");
      x.exit(1);
    });
  assert.deepEqual(await runCommand(p, ["ok"]), { stdout: "made\n", stderr: "" });
  assert.deepEqual(p.processes[0].spec.env, { PATH: TOOL_PATH });
  const err = await runCommand(p, ["bad", "/dev/vda2"]).catch((e) => e);
  assert.ok(err instanceof CommandError);
  assert.equal(err.message, '"bad /dev/vda2" exited with 1: device is busy');
  assert.deepEqual(toVolumeError(new ProvisionError("format", "/dev/vda2", { cause: err })), {
    message: 'Cannot format "/dev/vda2": "bad /dev/vda2" exited with 1: device is busy',
    code: "",
    op: "bad",
  });
});

Deno.test("toVolumeError keeps errno codes and operations", () => {
  const sys = new SysError("BLKPG_ADD_PARTITION", 16, "/dev/vda");
  assert.deepEqual(
    toVolumeError(new ProvisionError("re-read", "/dev/vda", { cause: sys })).code,
    "EBUSY",
  );
  assert.equal(toVolumeError(sys).op, "BLKPG_ADD_PARTITION");
});

Deno.test("mkfs command lines", () => {
  assert.deepEqual(mkfsArgv("ext4", "/dev/vda2", "STATE"), [
    "mkfs.ext4",
    "-F",
    "-q",
    "-L",
    "STATE",
    "-E",
    "lazy_itable_init=1,lazy_journal_init=1",
    "/dev/vda2",
  ]);
  assert.deepEqual(mkfsArgv("xfs", "/dev/vda3", "EPHEMERAL"), [
    "mkfs.xfs",
    "-f",
    "-q",
    "-L",
    "EPHEMERAL",
    "/dev/vda3",
  ]);
});
