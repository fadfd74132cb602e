/**
 * Host binaries a machined node needs besides Deno and the program: containerd
 * and runc (the container runtime it supervises), mkfs.ext4 (formatting STATE
 * and EPHEMERAL) and Debian's CA bundle (the base of the node's trusted roots), cryptsetup (encrypting STATE and EPHEMERAL), wg (WireGuard keys and peers), nft (the ingress firewall, platform/firewall; its libraries come by
 * `ldd` on the host, and from imager/arch/profiles.ts's pinned packages for arm64). They come from Debian's packages on the build host; a missing
 * one is reported and left out, and the node then shows the failure in its status.
 */
import type { ExtraFile } from "./initramfs/initramfs.ts";

/** What the node expects where, and the Debian package that provides it. */
export const NODE_EXTRAS: ReadonlyArray<ExtraFile & { package: string }> = [
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
];

/** The node extras present on this host, and the ones missing. */
export async function nodeExtras(): Promise<{ present: ExtraFile[]; missing: string[] }> {
  const present: ExtraFile[] = [];
  const missing: string[] = [];
  for (const x of NODE_EXTRAS) {
    try {
      await Deno.stat(x.source);
      const { package: _, ...file } = x;
      present.push(file);
    } catch {
      missing.push(`${x.source} (Debian package ${x.package})`);
    }
  }
  return { present, missing };
}
