import assert from "node:assert/strict";
import { type Entry, parseEntryName } from "./entries.ts";
import { espPath, KexecPlanError, parseEntryBoot, planKexec } from "./kexec_plan.ts";
import { loaderEntry, ukiLoaderEntry } from "../layout/mod.ts";

const e = (file: string, generation: number): Entry => ({
  file,
  name: parseEntryName(file)!,
  generation,
});
const text = (slot: "A" | "B", generation: number) =>
  loaderEntry(slot, `console=ttyS0 machined.slot=${slot} panic=10`, { generation });

Deno.test("entry boot lines: linux, one initrd, options joined as systemd-boot joins them", () => {
  const b = parseEntryBoot([
    "title machined 2.0.0 (slot B)",
    "# a comment",
    "linux \\B\\vmlinuz",
    "initrd B/initramfs.img",
    "options console=ttyS0",
    "options   machined.slot=B  panic=10 ",
    "",
  ].join("\n"));
  assert.deepEqual(b, {
    linux: "/B/vmlinuz",
    initrds: ["/B/initramfs.img"],
    options: "console=ttyS0 machined.slot=B  panic=10",
  });
  assert.equal(espPath("/A/vmlinuz"), "/A/vmlinuz");
});

Deno.test("kexec plan: the armed trial boots first, with the loader's +3 → +2-1 rename", () => {
  const entries = [e("machined-a.conf", 1), e("machined-b+3.conf", 2)];
  const p = planKexec(entries, (x) => text(x.name.slot, x.generation));
  assert.deepEqual(p, {
    entry: "machined-b+3.conf",
    renamedTo: "machined-b+2-1.conf",
    kernel: "/B/vmlinuz",
    initramfs: "/B/initramfs.img",
    cmdline: "console=ttyS0 machined.slot=B panic=10",
    steps: [
      {
        op: "rename",
        from: "/loader/entries/machined-b+3.conf",
        to: "/loader/entries/machined-b+2-1.conf",
      },
      { op: "syncDir", dir: "/loader/entries" },
    ],
  });
});

Deno.test("kexec plan: a trial on its second try counts +2-1 → +1-2", () => {
  const p = planKexec(
    [e("machined-a.conf", 1), e("machined-b+2-1.conf", 2)],
    (x) => text(x.name.slot, x.generation),
  );
  assert.equal(p.renamedTo, "machined-b+1-2.conf");
});

Deno.test("kexec plan: blessed entries need no rename; the newest generation boots", () => {
  const p = planKexec(
    [e("machined-a.conf", 1), e("machined-b.conf", 2)],
    (x) => text(x.name.slot, x.generation),
  );
  assert.equal(p.entry, "machined-b.conf");
  assert.equal(p.renamedTo, "machined-b.conf");
  assert.deepEqual(p.steps, []);
});

Deno.test("kexec plan: a bad trial (+0) sorts last, as the loader sorts it", () => {
  const p = planKexec(
    [e("machined-a.conf", 1), e("machined-b+0-3.conf", 2)],
    (x) => text(x.name.slot, x.generation),
  );
  assert.equal(p.entry, "machined-a.conf");
  assert.equal(p.kernel, "/A/vmlinuz");
  assert.deepEqual(p.steps, []);
});

Deno.test("kexec plan: refused without an entry, without linux, or with two initrds", () => {
  assert.throws(
    () => planKexec([], () => ""),
    (x) => x instanceof KexecPlanError && x.reason === "no-entry",
  );
  const one = [e("machined-a.conf", 1)];
  assert.throws(
    () => planKexec(one, () => "initrd /A/initramfs.img\noptions quiet\n"),
    (x) => x instanceof KexecPlanError && x.reason === "bad-entry" && /no linux/.test(x.message),
  );
  assert.throws(
    () => planKexec(one, () => "linux /A/vmlinuz\ninitrd /A/a.img\ninitrd /A/b.img\n"),
    (x) => x instanceof KexecPlanError && /2 initrd lines/.test(x.message),
  );
  const bare = planKexec(one, () => "linux /A/vmlinuz\n");
  assert.equal(bare.initramfs, undefined);
  assert.equal(bare.cmdline, "");
});

Deno.test("kexec plan: a signed UKI's entry is not staged (the node reboots cold through the firmware)", () => {
  // Under Secure Boot the firmware checks the UKI; kexec would skip that check, so no plan.
  const one = [e("machined-a.conf", 1)];
  assert.throws(
    () => planKexec(one, () => ukiLoaderEntry("A", { generation: 1, version: "1.0.0" })),
    (x) => x instanceof KexecPlanError && x.reason === "bad-entry" && /no linux/.test(x.message),
  );
});
