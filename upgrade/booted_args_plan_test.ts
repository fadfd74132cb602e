import assert from "node:assert/strict";
import { SlotError } from "../bundle/mod.ts";
import { assertOnlyOptionsLine, planBootedArgs } from "./booted_args_plan.ts";
import { readListing } from "./slot_writer.ts";
import { imagedEsp, ukiEsp } from "./testing.ts";
import type { FakeEspBackend } from "../platform/esp/mod.ts";

async function read(esp: FakeEspBackend) {
  const listing = await esp.read(readListing);
  return { listing, text: (f: string) => esp.text(`/loader/entries/${f}`)! };
}

Deno.test("the plan names the booted entry and its options line only; every other line is kept", async () => {
  const esp = imagedEsp();
  const { listing, text } = await read(esp);
  const d = planBootedArgs(listing, "A", text, { add: ["nosmt", "a=1"], remove: [] });
  assert.equal(d.kind, "entry");
  if (d.kind !== "entry") return;
  const p = d.plan;
  assert.equal(p.path, "/loader/entries/machined-a.conf");
  const old = text("machined-a.conf").split("\n");
  assert.equal(old[p.line], `options ${p.before}`);
  assert.match(p.after, new RegExp(`^${p.before} nosmt a=1 machined\\.args=[\\w-]+$`));
  const neu = p.text.split("\n");
  assert.deepEqual(neu.filter((_, i) => i !== p.line), old.filter((_, i) => i !== p.line));
  assert.deepEqual(p.steps, [
    { op: "writeEntry", path: "/loader/entries/machined-a.cmdline.tmp", text: p.text },
    { op: "rename", from: "/loader/entries/machined-a.cmdline.tmp", to: p.path },
    { op: "syncDir", dir: "/loader/entries" },
  ]);
  assert.match(p.after, /machined\.slot=A machined\.root\.sha256=[0-9a-f]{64}/);
  // B booted: B's entry, never A's.
  const b = planBootedArgs(listing, "B", text, { add: ["nosmt"], remove: [] });
  assert.equal(b.kind === "entry" && b.plan.path, "/loader/entries/machined-b.conf");
});

Deno.test("the node's words stay; remove takes a word out; an equal line plans no step", async () => {
  const esp = imagedEsp();
  const { listing, text } = await read(esp);
  const d = planBootedArgs(listing, "A", text, { add: [], remove: [] });
  assert.equal(d.kind === "entry" && d.plan.steps.length, 0);
  const quiet = (f: string) => text(f).replace(/^options /m, "options quiet ");
  const r = planBootedArgs(listing, "A", quiet, { add: [], remove: ["quiet"] });
  if (r.kind !== "entry") throw new Error("expected an entry");
  assert.ok(!r.plan.after.split(" ").includes("quiet"));
  assert.match(
    r.plan.after,
    /^console=ttyS0 machined\.slot=A machined\.root\.sha256=\S+ machined\.args=/,
  );
  // Dropping it from remove puts it back, and the record goes.
  const back = (f: string) => f === r.plan.file ? r.plan.text : text(f);
  const again = planBootedArgs(listing, "A", back, { add: [], remove: [] });
  if (again.kind !== "entry") throw new Error("expected an entry");
  assert.equal(
    again.plan.after,
    `${r.plan.before.replace(/^quiet /, "")} quiet`,
  );
});

Deno.test("a trial entry keeps its counted name; a UKI entry plans nothing", async () => {
  const esp = imagedEsp();
  const a = esp.files.get("/loader/entries/machined-a.conf")!;
  esp.files.delete("/loader/entries/machined-a.conf");
  esp.files.set("/loader/entries/machined-a+2-1.conf", a);
  const { listing, text } = await read(esp);
  const d = planBootedArgs(listing, "A", text, { add: ["nosmt"], remove: [] });
  assert.equal(d.kind === "entry" && d.plan.path, "/loader/entries/machined-a+2-1.conf");
  const u = await read(ukiEsp());
  assert.deepEqual(planBootedArgs(u.listing, "A", u.text, { add: ["nosmt"], remove: [] }), {
    kind: "uki",
    slot: "A",
    file: "machined-a.conf",
  });
});

Deno.test("refusals: unknown slot, twin entries, two options lines, an overlong line", async () => {
  const esp = imagedEsp();
  const { listing, text } = await read(esp);
  const args = { add: ["nosmt"], remove: [] };
  const reason = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      assert.ok(e instanceof SlotError, String(e));
      return e.reason;
    }
    return "none";
  };
  assert.equal(reason(() => planBootedArgs(listing, undefined, text, args)), "no-booted-slot");
  const twins = {
    ...listing,
    entries: [...listing.entries, { ...listing.entries[0], file: "machined-a+1.conf" }],
  };
  assert.equal(reason(() => planBootedArgs(twins, "A", text, args)), "no-entry");
  const two = (f: string) => `${text(f)}options extra\n`;
  assert.equal(reason(() => planBootedArgs(listing, "A", two, args)), "bad-entry");
  const long = { add: Array.from({ length: 9 }, (_, i) => `k${i}=${"x".repeat(250)}`), remove: [] };
  assert.equal(reason(() => planBootedArgs(listing, "A", text, long)), "kernel-args");
});

Deno.test("the guard refuses a plan touching another file or another line", async () => {
  const esp = imagedEsp();
  const { listing, text } = await read(esp);
  const d = planBootedArgs(listing, "A", text, { add: ["nosmt"], remove: [] });
  if (d.kind !== "entry") throw new Error("expected an entry");
  const old = text("machined-a.conf");
  assert.throws(
    () =>
      assertOnlyOptionsLine(old, {
        ...d.plan,
        steps: [...d.plan.steps, { op: "remove", path: "/A/root.img" }],
      }),
    /refusing remove \/A\/root\.img/,
  );
  assert.throws(
    () =>
      assertOnlyOptionsLine(old, {
        ...d.plan,
        text: d.plan.text.replace(/^linux .*/m, "linux /B/vmlinuz"),
      }),
    /only its options line may change/,
  );
});
