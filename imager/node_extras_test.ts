import assert from "node:assert/strict";
import { NODE_EXTRAS } from "./node_extras.ts";
import { PROFILES } from "./arch/profiles.ts";
import { DEFAULT_MODULES } from "./versions.ts";
import { FIREWALL_MODULES } from "../controllers/firewall/mod.ts";

const pinned = new Set(PROFILES.arm64.packages.map((p) => p.package));

Deno.test("node extras: nft ships at /usr/sbin/nft, from Debian's nftables", () => {
  assert.deepEqual(
    NODE_EXTRAS.map((x) => [x.dest, x.package]),
    [
      ["/usr/bin/containerd", "containerd"],
      ["/usr/bin/containerd-shim-runc-v2", "containerd"],
      ["/usr/bin/runc", "runc"],
      ["/usr/sbin/mkfs.ext4", "e2fsprogs"],
      ["/usr/sbin/nft", "nftables"],
    ],
  );
  assert.equal(NODE_EXTRAS.find((x) => x.package === "nftables")?.source, "/usr/sbin/nft");
});

Deno.test("node extras: every package is pinned for arm64's sysroot", () => {
  for (const x of NODE_EXTRAS) assert.ok(pinned.has(x.package), `${x.package} not pinned`);
});

const haveNft = (() => {
  try {
    return Deno.statSync("/usr/sbin/nft").isFile;
  } catch {
    return false;
  }
})();

Deno.test({
  name:
    "node extras: the libraries ldd lists for nft come from packages pinned for arm64 (needs nft)",
  ignore: !haveNft,
  async fn() {
    const run = async (cmd: string, args: string[]) =>
      new TextDecoder().decode(
        (await new Deno.Command(cmd, { args, stdout: "piped" }).output()).stdout,
      );
    const libs = [...(await run("ldd", ["/usr/sbin/nft"])).matchAll(/=> (\S+)/g)].map((m) =>
      m[1].split("/").pop()!
    );
    assert.ok(libs.includes("libnftables.so.1"), libs.join(" "));
    for (const lib of libs) {
      const owners = (await run("dpkg", ["-S", lib])).split("\n").map((l) => l.split(":")[0]);
      assert.ok(owners.some((o) => pinned.has(o)), `${lib} (from ${owners.join(", ")}) not pinned`);
    }
  },
});

Deno.test("the firewall's kernel modules are loaded at boot (no modprobe on the node)", () => {
  for (const m of FIREWALL_MODULES) {
    assert.ok(DEFAULT_MODULES.includes(m), `${m} not in DEFAULT_MODULES`);
  }
});
