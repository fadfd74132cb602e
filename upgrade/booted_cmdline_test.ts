import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { PowerCut } from "../platform/esp/mod.ts";
import { SlotError } from "../bundle/mod.ts";
import { EspBootCmdline } from "./booted_cmdline.ts";
import { bootFake, imagedEsp, ukiEsp } from "./testing.ts";
import type { FakeEspBackend } from "../platform/esp/mod.ts";
import type { Slot } from "./entries.ts";

const ARGS = { add: ["nosmt", "mitigations=auto"], remove: [] };

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
    for (const half of [false, true]) {
      const esp = imagedEsp();
      const old = esp.text("/loader/entries/machined-a.conf")!;
      const before = others(esp);
      esp.cutAt(cut);
      await assert.rejects(() => backend(esp).write(ARGS), PowerCut);
      esp.powerOn();
      const tmp = esp.files.get("/loader/entries/machined-a.cmdline.tmp");
      // The write itself cut halfway: half the temporary file on the medium.
      if (half && tmp) esp.files.set("/loader/entries/machined-a.cmdline.tmp", tmp.slice(0, 40));
      const after = esp.text("/loader/entries/machined-a.conf");
      assert.ok(after === old || after === want, `cut at ${cut}: a mixed entry ${after}`);
      assert.deepEqual(others(esp), before, `cut at ${cut}: another file changed`);
      assert.equal(bootFake(imagedCopy(esp))?.rootOk, true, `cut at ${cut}: not bootable`);
      await backend(esp).write(ARGS);
      assert.equal(esp.text("/loader/entries/machined-a.conf"), want, `cut at ${cut}: no converge`);
    }
  }
});

Deno.test("Secure Boot: a UKI entry is left as it is; a Pi and a non-slot boot say why", async () => {
  const esp = ukiEsp();
  const before = others(esp);
  assert.deepEqual(await backend(esp).write(ARGS), {
    kind: "uki",
    slot: "A",
    file: "machined-a.conf",
  });
  assert.equal(esp.writeSessions, 0);
  assert.deepEqual(others(esp), before);
  const pi = await backend(imagedEsp(), "A", "rpi3").write(ARGS);
  assert.equal(pi.kind === "none" && /cmdline\.txt/.test(pi.reason), true);
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
