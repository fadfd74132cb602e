import assert from "node:assert/strict";
import {
  bootChoice,
  bootedSlot,
  type Entry,
  entryFileName,
  parseEntryName,
  slotState,
  sortEntries,
} from "./entries.ts";

const e = (file: string, generation: number): Entry => ({
  file,
  name: parseEntryName(file)!,
  generation,
});

Deno.test("entry names: counters parsed and printed back; foreign files ignored", () => {
  for (
    const f of [
      "machined-a.conf",
      "machined-b+3.conf",
      "machined-b+2-1.conf",
      "machined-b+0-3.conf",
    ]
  ) {
    assert.equal(entryFileName(parseEntryName(f)!), f);
  }
  assert.deepEqual(parseEntryName("machined-b+2-1.conf"), { slot: "B", left: 2, done: 1 });
  assert.equal(parseEntryName("a.conf"), undefined);
  assert.equal(parseEntryName("machined-b.tmp"), undefined);
  assert.equal(parseEntryName("machined-c.conf"), undefined);
  assert.equal(slotState(parseEntryName("machined-b+0-3.conf")), "bad");
  assert.equal(slotState(parseEntryName("machined-b+1-2.conf")), "trial");
  assert.equal(slotState(parseEntryName("machined-a.conf")), "blessed");
  assert.equal(slotState(undefined), "empty");
});

Deno.test("systemd-boot 252's order: no tries left last, then the higher generation", () => {
  const order = sortEntries([e("machined-a.conf", 1), e("machined-b+0-3.conf", 2)]).map((x) =>
    x.file
  );
  assert.deepEqual(order, ["machined-a.conf", "machined-b+0-3.conf"]);
  assert.equal(
    sortEntries([e("machined-a.conf", 1), e("machined-b+3.conf", 2)])[0].file,
    "machined-b+3.conf",
  );
  assert.equal(
    sortEntries([e("machined-a.conf", 3), e("machined-b.conf", 2)])[0].file,
    "machined-a.conf",
  );
});

Deno.test("a trial counts down on each boot (as measured: b+2 boots B B then A)", () => {
  let entries = [e("machined-a.conf", 1), e("machined-b+2.conf", 2)];
  const booted: string[] = [];
  for (let i = 0; i < 4; i++) {
    const c = bootChoice(entries)!;
    booted.push(c.entry.name.slot);
    entries = entries.map((x) => (x === c.entry ? e(c.renamedTo, x.generation) : x));
  }
  assert.deepEqual(booted, ["B", "B", "A", "A"]);
  assert.ok(entries.some((x) => x.file === "machined-b+0-2.conf"));
});

Deno.test("bootedSlot reads machined.slot= before the -- separator only", () => {
  assert.equal(bootedSlot("console=ttyS0 machined.slot=B machined.root.sha256=ab -- x"), "B");
  assert.equal(bootedSlot("console=ttyS0 -- machined.slot=B"), undefined);
  assert.equal(bootedSlot("machined.slot=A"), "A");
});
