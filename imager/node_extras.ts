/**
 * Host binaries a machined node needs besides Deno and the program: containerd
 * and runc (the container runtime it supervises), mkfs.ext4 (formatting STATE
 * and EPHEMERAL) and Debian's CA bundle (the base of the node's trusted roots), cryptsetup (encrypting STATE and EPHEMERAL), wg (WireGuard keys and peers), tpm2 (the `tpm` key kind, x86_64), nft (the ingress firewall, platform/firewall; its libraries come by
 * `ldd` on the host, and from imager/arch/profiles.ts's pinned packages for arm64). They come from Debian's packages on the build host; a missing
 * one is reported and left out, and the node then shows the failure in its status.
 */
import type { ExtraFile } from "./initramfs/initramfs.ts";
import type { Arch } from "./arch/profiles.ts";

/** One node extra: the file, its Debian package, and the architectures that ship it (all by default). */
export type NodeExtra = ExtraFile & { package: string; arches?: readonly Arch[] };

/** What the node expects where, and the Debian package that provides it. */
export const NODE_EXTRAS: ReadonlyArray<NodeExtra> = [
  { source: "/usr/bin/containerd", dest: "/usr/bin/containerd", package: "containerd" },
  {
    source: "/usr/bin/containerd-shim-runc-v2",
    dest: "/usr/bin/containerd-shim-runc-v2",
    package: "containerd",
  },
  { source: "/usr/sbin/runc", dest: "/usr/bin/runc", package: "runc" },
  { source: "/usr/sbin/mke2fs", dest: "/usr/sbin/mkfs.ext4", package: "e2fsprogs" },
  // The system CA bundle trust.TrustedRootsController merges `machine.trusted_roots` into.
  {
    source: "/etc/ssl/certs/ca-certificates.crt",
    dest: "/etc/ssl/certs/ca-certificates.crt",
    mode: 0o644,
    withLibs: false,
    package: "ca-certificates",
  },
  { source: "/usr/sbin/nft", dest: "/usr/sbin/nft", package: "nftables" },
  // LUKS2 for encrypted STATE and EPHEMERAL (platform/crypt); its libraries come by ldd.
  { source: "/usr/sbin/cryptsetup", dest: "/usr/sbin/cryptsetup", package: "cryptsetup-bin" },
  // WireGuard keys and peers (platform/wireguard): `wg syncconf` and `wg show dump`; libc only.
  { source: "/usr/bin/wg", dest: "/usr/bin/wg", package: "wireguard-tools" },
  // The `tpm` key kind (platform/crypt/tpm_tools.ts): tpm2-tools' multi-call binary (its libtss2
  // and libcurl closure by ldd) and the TCTI library it dlopens for /dev/tpmrm0. x86_64 only:
  // a tpm key needs the signed PCR 11 policy of a Secure Boot UKI, built for x86_64 UEFI only.
  { source: "/usr/bin/tpm2", dest: "/usr/bin/tpm2", package: "tpm2-tools", arches: ["amd64"] },
  {
    source: "/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0",
    dest: "/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0",
    mode: 0o644,
    package: "libtss2-tcti-device0",
    arches: ["amd64"],
  },
];

/** The node extras an image for `arch` ships. Pure. */
export function extrasFor(arch: Arch): NodeExtra[] {
  return NODE_EXTRAS.filter((x) => !x.arches || x.arches.includes(arch));
}

/** The node extras present on this host, and the ones missing. */
export async function nodeExtras(
  arch: Arch = "amd64",
): Promise<{ present: ExtraFile[]; missing: string[] }> {
  const present: ExtraFile[] = [];
  const missing: string[] = [];
  for (const x of extrasFor(arch)) {
    try {
      await Deno.stat(x.source);
      const { package: _, arches: __, ...file } = x;
      present.push(file);
    } catch {
      missing.push(`${x.source} (Debian package ${x.package})`);
    }
  }
  return { present, missing };
}
