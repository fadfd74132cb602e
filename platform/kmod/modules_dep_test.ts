import assert from "node:assert/strict";
import {
  moduleName,
  parseModulesBuiltin,
  parseModulesDep,
  parseProcModules,
  resolveLoadOrder,
} from "./modules_dep.ts";

const GOLDEN_DEP = `
kernel/fs/overlayfs/overlay.ko.zst:
kernel/drivers/net/virtio_net.ko.zst: kernel/drivers/net/net_failover.ko.zst kernel/net/core/failover.ko.zst
kernel/drivers/net/net_failover.ko.zst: kernel/net/core/failover.ko.zst
kernel/net/core/failover.ko.zst:
kernel/net/netfilter/nf-conntrack.ko: kernel/net/netfilter/nf_defrag_ipv4.ko kernel/lib/libcrc32c.ko
kernel/net/netfilter/nf_defrag_ipv4.ko:
kernel/lib/libcrc32c.ko:
`;

Deno.test("moduleName normalises paths, suffixes and dashes", () => {
  assert.equal(moduleName("kernel/drivers/net/virtio_net.ko.zst"), "virtio_net");
  assert.equal(moduleName("a/b/snd-hda-intel.ko.xz"), "snd_hda_intel");
  assert.equal(moduleName("loop"), "loop");
});

Deno.test("parseModulesDep + resolveLoadOrder: dependencies first, each once", () => {
  const dep = parseModulesDep(GOLDEN_DEP);
  assert.equal(dep.size, 7);
  assert.deepEqual(dep.get("virtio_net")?.deps, ["net_failover", "failover"]);
  assert.deepEqual(resolveLoadOrder(dep, "virtio_net"), ["failover", "net_failover", "virtio_net"]);
  assert.deepEqual(resolveLoadOrder(dep, "nf-conntrack"), [
    "nf_defrag_ipv4",
    "libcrc32c",
    "nf_conntrack",
  ]);
  assert.deepEqual(resolveLoadOrder(dep, "overlay"), ["overlay"]);
});

Deno.test("resolveLoadOrder names missing modules and cycles", () => {
  const dep = parseModulesDep("a.ko: b.ko\nb.ko: a.ko\nc.ko: missing.ko\n");
  assert.throws(() => resolveLoadOrder(dep, "a"), /cycle: a -> b -> a/);
  assert.throws(
    () => resolveLoadOrder(dep, "c"),
    /"missing" is not in modules.dep \(needed by "c"\)/,
  );
  assert.throws(() => resolveLoadOrder(dep, "zzz"), RangeError);
  assert.throws(() => parseModulesDep("no colon here"), SyntaxError);
});

Deno.test("parseModulesBuiltin and parseProcModules", () => {
  assert.deepEqual(
    parseModulesBuiltin("kernel/fs/ext4/ext4.ko\nkernel/drivers/block/virtio_blk.ko\n"),
    new Set(["ext4", "virtio_blk"]),
  );
  const loaded = parseProcModules(
    "overlay 151552 0 - Live 0x0000000000000000\n" +
      "failover 12288 1 net_failover, Live 0x0000000000000000 (E)\n",
  );
  assert.deepEqual(loaded[0], {
    name: "overlay",
    size: 151552,
    refcount: 0,
    usedBy: [],
    state: "Live",
  });
  assert.deepEqual(loaded[1].usedBy, ["net_failover"]);
});
