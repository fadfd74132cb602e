import assert from "node:assert/strict";
import { FakeBootIdSource, PROC_BOOT_ID, ProcBootIdSource } from "./boot_id.ts";

const hasProc = await Deno.stat(PROC_BOOT_ID).then(() => true, () => false);

Deno.test({
  name: "ProcBootIdSource reads the kernel's boot id, stable within a boot (needs /proc)",
  ignore: !hasProc,
  async fn() {
    const src = new ProcBootIdSource();
    const id = await src.bootId();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(await new ProcBootIdSource().bootId(), id);
  },
});

Deno.test("ProcBootIdSource on a file: trimmed, lower-cased; a missing file rejects", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/id`, "ABCD\n");
    assert.equal(await new ProcBootIdSource(`${dir}/id`).bootId(), "abcd");
    await assert.rejects(new ProcBootIdSource(`${dir}/none`).bootId(), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FakeBootIdSource changes on reboot", async () => {
  const f = new FakeBootIdSource("one");
  assert.equal(await f.bootId(), "one");
  const next = f.reboot();
  assert.notEqual(next, "one");
  assert.equal(await f.bootId(), next);
});
