import assert from "node:assert/strict";
import type { SlotError } from "../bundle/mod.ts";
import { assertOnlyCmdlineTxt, planPiBootedArgs } from "./pi_booted_args.ts";

const LINE = "console=ttyS1,115200 machined.slot=B machined.root.sha256=ab rootwait";

Deno.test("planPiBootedArgs: one file, written beside and renamed over; nothing when unchanged", () => {
  const p = planPiBootedArgs("B", LINE + "\n", { add: ["nosmt"], remove: ["rootwait"] });
  assert.equal(p.path, "/B/cmdline.txt");
  assert.equal(p.before, LINE);
  assert.match(
    p.after,
    /^console=ttyS1,115200 machined\.slot=B machined\.root\.sha256=ab nosmt machined\.args=\S+$/,
  );
  assert.deepEqual(p.steps.map((s) => s.op), ["writeEntry", "rename", "syncDir"]);
  const same = planPiBootedArgs("B", p.after + "\n", { add: ["nosmt"], remove: ["rootwait"] });
  assert.deepEqual(same.steps, [], "applying the same args again writes nothing");
});

Deno.test("planPiBootedArgs refuses an unknown slot, a file that is not one line, and a node word", () => {
  const args = { add: ["nosmt"], remove: [] };
  assert.throws(
    () => planPiBootedArgs(undefined, LINE, args),
    (e: SlotError) => e.reason === "no-booted-slot",
  );
  assert.throws(() => planPiBootedArgs("A", "", args), (e: SlotError) => e.reason === "bad-entry");
  assert.throws(() => planPiBootedArgs("A", `${LINE}\nsecond`, args), /2 lines, not one/);
  assert.throws(
    () => planPiBootedArgs("A", LINE, { add: ["machined.slot=A"], remove: [] }),
    (e: SlotError) => e.reason === "kernel-args",
  );
});

Deno.test("assertOnlyCmdlineTxt refuses a plan touching anything but the slot's cmdline.txt", () => {
  assert.throws(
    () =>
      assertOnlyCmdlineTxt({
        path: "/A/cmdline.txt",
        steps: [{ op: "rename", from: "/A/cmdline.txt.tmp", to: "/A/kernel8.img" }],
      }),
    /refusing rename \/A\/kernel8\.img: only \/A\/cmdline\.txt may change/,
  );
});
