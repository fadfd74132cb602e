import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { PowerCut } from "../platform/esp/mod.ts";
import { SlotError } from "../bundle/mod.ts";
import { EspBootCmdline } from "./booted_cmdline.ts";
import { bootFake, bootPiFake, imagedEsp, imagedPiFat, ukiEsp } from "./testing.ts";
import type { FakeEspBackend } from "../platform/esp/mod.ts";
import type { Slot } from "./entries.ts";

const ARGS = { add: ["nosmt", "mitigations=auto"], remove: [] };
const TMP = "/loader/entries/machined-a.cmdline.tmp";

function backend(esp: FakeEspBackend, slot: Slot | null = "A", board = "") {
  return new EspBootCmdline({
    esp,
    booted: () => Promise.resolve(slot ?? undefined),
    board: () => Promise.resolve(board),
  });
}

/** Every file but the booted entry (and its temporary), hashed. */
function others(esp: FakeEspBackend): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, b] of esp.files) {
    if (p.startsWith("/loader/entries/machined-a.")) continue;
    out[p] = createHash("sha256").update(b).digest("hex");
  }
  return out;
}

Deno.test("write: only the booted entry's options line changes; the next boot has the args", async () => {
  const esp = imagedEsp();
  const before = others(esp);
  const old = esp.text("/loader/entries/machined-a.conf")!;
  const next = await backend(esp).write(ARGS);
  assert.equal(next.kind, "entry");
  const now = esp.text("/loader/entries/machined-a.conf")!;
  assert.deepEqual(
    now.split("\n").filter((l) => !l.startsWith("options")),
    old.split("\n").filter((l) => !l.startsWith("options")),
  );
  assert.match(
    now,
    /^options console=ttyS0 machined\.slot=A .* nosmt mitigations=auto machined\.args=\S+$/m,
  );
  assert.deepEqual(others(esp), before, "no other file (A's images, B) was written");
  assert.equal(esp.text("/loader/entries/machined-a.cmdline.tmp"), undefined);
  assert.deepEqual(esp.log, [
    "writeFile /loader/entries/machined-a.cmdline.tmp",
    "rename /loader/entries/machined-a.cmdline.tmp /loader/entries/machined-a.conf",
    "syncDir /loader/entries",
  ]);
  // An equal line opens no write session.
  const sessions = esp.writeSessions;
  await backend(esp).write(ARGS);
  assert.equal(esp.writeSessions, sessions);
  assert.deepEqual(bootFake(esp), { slot: "A", entry: "machined-a.conf", rootOk: true });
});

Deno.test("a power cut at every step leaves the old entry or the new one whole, and a retry converges", async () => {
  const want = await (async () => {
    const esp = imagedEsp();
    await backend(esp).write(ARGS);
    return esp.text("/loader/entries/machined-a.conf")!;
  })();
  for (let cut = 0; cut < 3; cut++) {
    for (const torn of ["no", "half", "zero-tail"] as const) {
      const esp = imagedEsp();
      const old = esp.text("/loader/entries/machined-a.conf")!;
      const before = others(esp);
      esp.cutAt(cut);
      await assert.rejects(() => backend(esp).write(ARGS), PowerCut);
      esp.powerOn();
      const tmp = esp.files.get(TMP);
      // The write itself cut halfway: half the temporary file on the medium, or all of it
      // grown first and only its head written (platform/esp/dir_files.ts).
      if (torn === "half" && tmp) esp.files.set(TMP, tmp.slice(0, 40));
      if (torn === "zero-tail" && tmp) {
        const grown = new Uint8Array(tmp.length);
        grown.set(tmp.subarray(0, 40));
        esp.files.set(TMP, grown);
      }
      const after = esp.text("/loader/entries/machined-a.conf");
      assert.ok(after === old || after === want, `cut at ${cut}: a mixed entry ${after}`);
      assert.deepEqual(others(esp), before, `cut at ${cut}: another file changed`);
      assert.equal(bootFake(imagedCopy(esp))?.rootOk, true, `cut at ${cut}: not bootable`);
      await backend(esp).write(ARGS);
      assert.equal(esp.text("/loader/entries/machined-a.conf"), want, `cut at ${cut}: no converge`);
    }
  }
});

Deno.test("Secure Boot: a UKI entry is left as it is; a non-slot boot says why", async () => {
  const esp = ukiEsp();
  const before = others(esp);
  assert.deepEqual(await backend(esp).write(ARGS), {
    kind: "uki",
    slot: "A",
    file: "machined-a.conf",
  });
  assert.equal(esp.writeSessions, 0);
  assert.deepEqual(others(esp), before);
  const dev = await backend(imagedEsp(), null).next();
  assert.equal(dev.kind === "none" && /not booted from a slot/.test(dev.reason), true);
});

Deno.test("B booted: B's entry only; A untouched", async () => {
  const esp = imagedEsp();
  const a = esp.text("/loader/entries/machined-a.conf");
  const next = await backend(esp, "B").write(ARGS);
  assert.equal(next.kind === "entry" && next.file, "machined-b.conf");
  assert.equal(esp.text("/loader/entries/machined-a.conf"), a);
  await assert.rejects(
    () => backend(esp, "B").write({ add: ["root=/dev/sda"], remove: [] }),
    SlotError,
  );
});

/** A copy of the medium, so booting it (which renames entries) leaves the original as is. */
function imagedCopy(esp: FakeEspBackend): FakeEspBackend {
  const copy = imagedEsp();
  copy.files.clear();
  for (const [p, b] of esp.files) copy.files.set(p, b);
  return copy;
}

/** Every file of a Pi FAT but slot `slot`'s cmdline.txt (and its temporary), hashed. */
function piOthers(esp: FakeEspBackend, slot: Slot): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, b] of esp.files) {
    if (p.startsWith(`/${slot}/cmdline.txt`)) continue;
    out[p] = createHash("sha256").update(b).digest("hex");
  }
  return out;
}

Deno.test("a Pi: only the booted slot's cmdline.txt changes, by one rename; the next boot has the args", async () => {
  for (const slot of ["A", "B"] as const) {
    const esp = imagedPiFat();
    const before = piOthers(esp, slot);
    const next = await backend(esp, slot, "rpi3").write(ARGS);
    assert.equal(next.kind === "entry" && next.file, `${slot}/cmdline.txt`);
    const line = esp.text(`/${slot}/cmdline.txt`)!;
    assert.match(line, /^console=ttyS1,115200 .* nosmt mitigations=auto machined\.args=\S+\n$/);
    assert.equal(next.kind === "entry" && next.cmdline, line.trim());
    assert.deepEqual(piOthers(esp, slot), before, "nothing else of the FAT was written");
    assert.deepEqual(esp.log, [
      `writeFile /${slot}/cmdline.txt.tmp`,
      `rename /${slot}/cmdline.txt.tmp /${slot}/cmdline.txt`,
      `syncDir /${slot}`,
    ]);
    const sessions = esp.writeSessions;
    await backend(esp, slot, "rpi3").write(ARGS);
    assert.equal(esp.writeSessions, sessions, "an equal line opens no write session");
    // Undone by a config without them: the line the imager wrote, byte for byte.
    const fresh = imagedPiFat().text(`/${slot}/cmdline.txt`);
    await backend(esp, slot, "rpi3").write({ add: [], remove: [] });
    assert.equal(esp.text(`/${slot}/cmdline.txt`), fresh);
  }
  const esp = imagedPiFat();
  await backend(esp, "A", "rpi3").write(ARGS);
  assert.deepEqual(bootPiFake(esp), { slot: "A", rootOk: true }, "A still boots and verifies");
});

Deno.test("a Pi: a power cut at every step leaves the old line or the new one whole; a retry converges", async () => {
  const want = await (async () => {
    const esp = imagedPiFat();
    await backend(esp, "A", "rpi3").write(ARGS);
    return esp.text("/A/cmdline.txt")!;
  })();
  for (let cut = 0; cut < 3; cut++) {
    const esp = imagedPiFat();
    const old = esp.text("/A/cmdline.txt")!;
    esp.cutAt(cut);
    await assert.rejects(() => backend(esp, "A", "rpi3").write(ARGS), PowerCut);
    esp.powerOn();
    const after = esp.text("/A/cmdline.txt");
    assert.ok(after === old || after === want, `cut at ${cut}: a mixed line ${after}`);
    assert.equal(bootPiFake(esp)?.rootOk, true, `cut at ${cut}: not bootable`);
    await backend(esp, "A", "rpi3").write(ARGS);
    assert.equal(esp.text("/A/cmdline.txt"), want, `cut at ${cut}: the retry converges`);
  }
});
