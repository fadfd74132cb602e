import assert from "node:assert/strict";
import {
  moduleName,
  ModuleNotFoundError,
  parseModulesBuiltin,
  parseModulesDep,
  resolveModuleClosure,
} from "./module_closure.ts";
import { loadModuleIndex } from "./module_index.ts";
import { parseModInfo } from "./modinfo.ts";

const testdata = new URL("../testdata/", import.meta.url).pathname;

async function fixture() {
  return {
    modules: parseModulesDep(await Deno.readTextFile(`${testdata}/modules.dep`)),
    builtin: parseModulesBuiltin(await Deno.readTextFile(`${testdata}/modules.builtin`)),
  };
}

Deno.test("moduleName normalises dashes and compression suffixes", () => {
  assert.equal(moduleName("kernel/fs/nls/nls_iso8859-1.ko"), "nls_iso8859_1");
  assert.equal(moduleName("kernel/drivers/char/hw_random/virtio-rng.ko.xz"), "virtio_rng");
});

Deno.test("the closure lists every dependency before its dependents, once", async () => {
  const c = resolveModuleClosure(await fixture(), ["virtio_pci", "virtio_net", "virtio_blk"]);
  const names = c.load.map((m) => m.name);
  assert.deepEqual(names, [
    "virtio_pci_modern_dev",
    "virtio_pci_legacy_dev",
    "virtio_ring",
    "virtio",
    "virtio_pci",
    "failover",
    "net_failover",
    "virtio_net",
    "virtio_blk",
  ]);
  for (const m of c.load) {
    for (const d of m.deps) assert.ok(names.indexOf(d) < names.indexOf(m.name), `${d} < ${m.name}`);
  }
});

Deno.test("built-in modules are reported, not shipped; dashed names resolve", async () => {
  const c = resolveModuleClosure(await fixture(), [
    "ext4",
    "af_packet",
    "nls_iso8859_1",
    "virtio-rng",
  ]);
  assert.deepEqual(c.builtin, ["ext4", "af_packet"]);
  assert.deepEqual(c.load.map((m) => m.path), [
    "kernel/fs/nls/nls_iso8859-1.ko",
    "kernel/drivers/virtio/virtio_ring.ko",
    "kernel/drivers/virtio/virtio.ko",
    "kernel/drivers/char/hw_random/virtio-rng.ko",
  ]);
});

Deno.test("an unknown module is a typed error naming it", async () => {
  const index = await fixture();
  assert.throws(
    () => resolveModuleClosure(index, ["nosuch"]),
    (e) => e instanceof ModuleNotFoundError && e.module === "nosuch",
  );
});

/** A minimal ELF64 relocatable file whose only sections are .shstrtab and .modinfo. */
function fakeModule(modinfo: string): Uint8Array {
  const enc = new TextEncoder();
  const shstr = enc.encode("\0.shstrtab\0.modinfo\0");
  const info = enc.encode(modinfo);
  const shoff = 64 + shstr.length + info.length;
  const out = new Uint8Array(shoff + 3 * 64);
  const v = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  v.setBigUint64(0x28, BigInt(shoff), true);
  v.setUint16(0x3a, 64, true);
  v.setUint16(0x3c, 3, true);
  v.setUint16(0x3e, 1, true);
  out.set(shstr, 64);
  out.set(info, 64 + shstr.length);
  const sh = (i: number, name: number, offset: number, size: number) => {
    v.setUint32(shoff + i * 64, name, true);
    v.setBigUint64(shoff + i * 64 + 0x18, BigInt(offset), true);
    v.setBigUint64(shoff + i * 64 + 0x20, BigInt(size), true);
  };
  sh(1, 1, 64, shstr.length);
  sh(2, 11, 64 + shstr.length, info.length);
  return out;
}

Deno.test("parseModInfo reads depends= from an ELF .modinfo section", () => {
  const info = parseModInfo(
    fakeModule("license=GPL\0depends=virtio,virtio_ring\0name=virtio_blk\0"),
  );
  assert.deepEqual(info.get("depends"), ["virtio,virtio_ring"]);
  assert.deepEqual(info.get("name"), ["virtio_blk"]);
});

Deno.test("loadModuleIndex falls back to .modinfo when there is no modules.dep", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/kernel/drivers`, { recursive: true });
    await Deno.writeTextFile(`${dir}/modules.builtin`, "kernel/fs/ext4/ext4.ko\n");
    await Deno.writeFile(`${dir}/kernel/drivers/a.ko`, fakeModule("depends=b\0name=a\0"));
    await Deno.writeFile(`${dir}/kernel/drivers/b.ko`, fakeModule("depends=\0name=b\0"));
    const index = await loadModuleIndex(dir);
    const c = resolveModuleClosure(index, ["a", "ext4"]);
    assert.deepEqual(c.load.map((m) => m.path), ["kernel/drivers/b.ko", "kernel/drivers/a.ko"]);
    assert.deepEqual(c.builtin, ["ext4"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
