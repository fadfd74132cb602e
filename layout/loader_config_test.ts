import assert from "node:assert/strict";
import { loaderEntry, slotCmdline, slotOfCmdline } from "./loader_config.ts";

const H = "0".repeat(64);

Deno.test("slotOfCmdline: exactly one slot word before `--`, else unknown", () => {
  assert.equal(slotOfCmdline(`console=ttyS0 machined.slot=B machined.root.sha256=${H}`), "B");
  assert.equal(slotOfCmdline("machined.slot=A -- machined.slot=B"), "A");
  assert.equal(slotOfCmdline("console=ttyS0"), undefined);
  assert.equal(slotOfCmdline("machined.slot=B machined.slot=A"), undefined, "two that disagree");
  assert.equal(slotOfCmdline("machined.slot=A machined.slot=A"), undefined, "two that agree");
  assert.equal(slotOfCmdline("machined.slot=C"), undefined);
});

Deno.test("slotCmdline writes the slot's words once and refuses a line that carries them", () => {
  const line = slotCmdline("console=ttyS0 -- deno", "B", { sha256: H, fstype: "squashfs" });
  assert.equal(line, `console=ttyS0 machined.slot=B machined.root.sha256=${H} -- deno`);
  assert.throws(
    () => slotCmdline("console=ttyS0 machined.slot=A", "B", { sha256: H, fstype: "squashfs" }),
    /already carries machined.slot=A/,
  );
  assert.throws(
    () => slotCmdline(`x machined.root.sha256=${H}`, "A", { sha256: H, fstype: "squashfs" }),
    RangeError,
  );
});

Deno.test("loaderEntry refuses a command line or version that would add lines", () => {
  assert.throws(() => loaderEntry("A", "a\nlinux /x", { generation: 1 }), /printable ASCII/);
  assert.throws(
    () => loaderEntry("A", "a", { generation: 1, version: "1\noptions x" }),
    /printable ASCII/,
  );
  const text = loaderEntry("B", "console=ttyS0", { generation: 2, version: "2.0.0" });
  assert.equal(text.split("\n").filter((l) => l.startsWith("options ")).length, 1);
});
