import assert from "node:assert/strict";
import { extrasFor, NODE_EXTRAS } from "./node_extras.ts";
import { HOST_LIBRARIES, Rootfs } from "./initramfs/rootfs.ts";
import { PROFILES } from "./arch/profiles.ts";
import { DEFAULT_MODULES, KERNEL } from "./versions.ts";
import { resolveModuleClosure } from "./kernel/module_closure.ts";
import { loadModuleIndex } from "./kernel/module_index.ts";
import { FIREWALL_MODULES } from "../controllers/firewall/mod.ts";

const pinned = new Set(PROFILES.arm64.packages.map((p) => p.package));

Deno.test("node extras: each file and the Debian package it comes from (nft from nftables, cryptsetup from cryptsetup-bin)", () => {
  assert.deepEqual(
    NODE_EXTRAS.map((x) => [x.dest, x.package]),
    [
      ["/usr/bin/containerd", "containerd"],
      ["/usr/bin/containerd-shim-runc-v2", "containerd"],
      ["/usr/bin/runc", "runc"],
      ["/usr/sbin/mkfs.ext4", "e2fsprogs"],
      ["/etc/ssl/certs/ca-certificates.crt", "ca-certificates"],
      ["/usr/sbin/nft", "nftables"],
      ["/usr/sbin/cryptsetup", "cryptsetup-bin"],
      ["/usr/bin/wg", "wireguard-tools"],
      ["/usr/bin/tpm2", "tpm2-tools"],
      ["/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0", "libtss2-tcti-device0"],
    ],
  );
  assert.equal(NODE_EXTRAS.find((x) => x.package === "nftables")?.source, "/usr/sbin/nft");
});

Deno.test("node extras: every binary's package is pinned for arm64's sysroot (data files come from the host)", () => {
  for (const x of extrasFor("arm64")) {
    if (x.withLibs === false) continue;
    assert.ok(pinned.has(x.package), `${x.package} not pinned`);
  }
});

for (
  const [binary, mainLib] of [["/usr/sbin/nft", "libnftables.so.1"], [
    "/usr/sbin/cryptsetup",
    "libcryptsetup.so.12",
  ]]
) {
  const present = (() => {
    try {
      return Deno.statSync(binary).isFile;
    } catch {
      return false;
    }
  })();
  Deno.test({
    name:
      `node extras: the libraries ldd lists for ${binary} come from packages pinned for arm64 (needs ${binary})`,
    ignore: !present,
    async fn() {
      const run = async (cmd: string, args: string[]) =>
        new TextDecoder().decode(
          (await new Deno.Command(cmd, { args, stdout: "piped" }).output()).stdout,
        );
      const libs = [...(await run("ldd", [binary])).matchAll(/=> (\S+)/g)].map((m) =>
        m[1].split("/").pop()!
      );
      assert.ok(libs.includes(mainLib), libs.join(" "));
      for (const lib of libs) {
        const owners = (await run("dpkg", ["-S", lib])).split("\n").map((l) => l.split(":")[0]);
        assert.ok(
          owners.some((o) => pinned.has(o)),
          `${lib} (from ${owners.join(", ")}) not pinned`,
        );
      }
    },
  });
}

Deno.test("the firewall's kernel modules are loaded at boot (no modprobe on the node)", () => {
  for (const m of FIREWALL_MODULES) {
    assert.ok(DEFAULT_MODULES.includes(m), `${m} not in DEFAULT_MODULES`);
  }
});

Deno.test("the node image carries cryptsetup where NativeCryptBackend's PATH finds it", () => {
  const c = NODE_EXTRAS.find((x) => x.dest === "/usr/sbin/cryptsetup");
  assert.deepEqual(c, {
    source: "/usr/sbin/cryptsetup",
    dest: "/usr/sbin/cryptsetup",
    package: "cryptsetup-bin",
  });
  const dests = NODE_EXTRAS.map((x) => x.dest);
  assert.equal(new Set(dests).size, dests.length, "one source per destination");
});

Deno.test("the node's modules include dm-crypt, XTS and the crypto API socket", () => {
  for (const m of ["dm_crypt", "ecb", "xts", "algif_skcipher"]) {
    assert.ok(DEFAULT_MODULES.includes(m), m);
  }
});

Deno.test("the node image carries wg on the tool PATH and loads the wireguard module at boot", () => {
  assert.deepEqual(NODE_EXTRAS.find((x) => x.package === "wireguard-tools"), {
    source: "/usr/bin/wg",
    dest: "/usr/bin/wg",
    package: "wireguard-tools",
  });
  assert.ok(DEFAULT_MODULES.includes("wireguard"));
});

const home = Deno.env.get("HOME") ?? "/root";
const pinnedModules =
  `${home}/.cache/machined/imager/${KERNEL.package}_${KERNEL.version}/lib/modules/${KERNEL.release}`;
const havePinnedKernel = (() => {
  try {
    return Deno.statSync(pinnedModules).isDirectory;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "the pinned cloud kernel has wireguard as a module with its crypto and UDP tunnel " +
    "dependencies (needs the imager's cached kernel)",
  ignore: !havePinnedKernel,
  async fn() {
    const closure = resolveModuleClosure(await loadModuleIndex(pinnedModules), ["wireguard"]);
    const names = closure.load.map((m) => m.name);
    assert.equal(names.at(-1), "wireguard");
    for (
      const dep of ["udp_tunnel", "ip6_udp_tunnel", "libchacha20poly1305", "libcurve25519_generic"]
    ) {
      assert.ok(names.includes(dep), `${dep} not in ${names.join(" ")}`);
    }
  },
});

Deno.test("node extras: tpm2-tools ships to x86_64 images only (a tpm key needs a Secure Boot UKI)", () => {
  const tpm = (arch: "amd64" | "arm64") =>
    extrasFor(arch).filter((x) => x.package.startsWith("tpm2") || x.package.includes("tss2"))
      .map((x) => x.dest);
  assert.deepEqual(tpm("amd64"), [
    "/usr/bin/tpm2",
    "/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0",
  ]);
  assert.deepEqual(tpm("arm64"), []);
});

const hasTpm2 = (() => {
  try {
    return Deno.statSync("/usr/bin/tpm2").isFile;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "the x86_64 root tree carries tpm2, its libtss2 closure and the device TCTI it dlopens " +
    "(needs tpm2-tools and libtss2-tcti-device0 on the host)",
  ignore: !hasTpm2,
  async fn() {
    const fs = new Rootfs();
    for (const x of extrasFor("amd64").filter((x) => x.arches)) {
      await fs.binary(x.dest, x.source, x.mode ?? 0o755, HOST_LIBRARIES);
    }
    for (
      const path of [
        "/usr/bin/tpm2",
        "/lib/x86_64-linux-gnu/libtss2-esys.so.0",
        "/lib/x86_64-linux-gnu/libtss2-tctildr.so.0",
        "/lib/x86_64-linux-gnu/libtss2-mu.so.0",
        "/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0",
      ]
    ) assert.ok(fs.get(path), `${path} missing`);
    // The loader finds the TCTI by this name (TCTI "device" → libtss2-tcti-device.so.0).
    const ldr = new TextDecoder("latin1").decode(
      await Deno.readFile("/lib/x86_64-linux-gnu/libtss2-tctildr.so.0"),
    );
    assert.match(ldr, /libtss2-tcti-%s\.so\.0|libtss2-tcti-device\.so\.0/);
  },
});
