/**
 * The one place the imager's pinned inputs are recorded. Bumping the kernel
 * means changing {@link KERNEL} here (find the current one with
 * `apt-cache policy linux-image-cloud-amd64`) and nothing else.
 */

/** A Debian kernel package pinned to an exact version. */
export interface KernelPin {
  /** Binary package name, fetched with `apt-get download <package>=<version>`. */
  package: string;
  /** Exact Debian version of the package. */
  version: string;
  /** `uname -r` of the kernel inside: names /boot/vmlinuz-<release> and /lib/modules/<release>. */
  release: string;
}

/** Debian bookworm's cloud kernel (virtio drivers, no hardware zoo). */
export const KERNEL: KernelPin = {
  package: "linux-image-6.1.0-57-cloud-amd64",
  version: "6.1.192-3",
  release: "6.1.0-57-cloud-amd64",
};

/** systemd-boot's EFI binary from Debian's systemd-boot-efi. */
export const SYSTEMD_BOOT_EFI = "/usr/lib/systemd/boot/efi/systemd-bootx64.efi";
/** systemd's EFI stub from the same package: a Unified Kernel Image's first part (imager/uki/). */
export const SYSTEMD_STUB_EFI = "/usr/lib/systemd/boot/efi/linuxx64.efi.stub";

/** OVMF firmware from Debian's ovmf package (4 MiB variant). */
export const OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd";
/** OVMF built with Secure Boot and SMM: with empty variables it starts in Setup Mode. */
export const OVMF_SECURE_BOOT_CODE = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd";
/** Template of the firmware variable store; copied to a writable file per VM. */
export const OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd";

/**
 * Kernel modules PID 1 needs on a virtio VM. Their dependency closure is
 * shipped; the ones built into the cloud kernel (ext4, af_packet) need no file.
 */
export const DEFAULT_MODULES: readonly string[] = [
  "virtio_pci",
  "virtio_blk",
  "virtio_net",
  "virtio_scsi",
  "sd_mod",
  "virtio_rng",
  "virtio_console",
  "vfat",
  "nls_cp437",
  "nls_iso8859_1",
  "nls_utf8",
  // ISO9660, for a NoCloud CIDATA drive made with genisoimage or cloud-localds.
  "isofs",
  "ext4",
  "af_packet",
  // The ingress firewall (controllers/firewall's FIREWALL_MODULES): the node has no modprobe for
  // nf_tables to request them by, so PID 1 loads them; conntrack only tracks once a rule asks.
  "nf_tables",
  "nft_ct",
  "nft_limit",
  // Encrypted STATE and EPHEMERAL (docs/encryption.md): dm-crypt (pulls in dm_mod), the XTS
  // mode of aes-xts-plain64 and the ECB mode XTS is built on (AES itself is built in), and the
  // kernel crypto API socket cryptsetup decrypts LUKS2 keyslots through. No modprobe helper
  // runs on the node, so what the crypto API would request on demand is loaded up front:
  // without ecb, opening the mapping fails with ENOENT ("reload ioctl ... failed", in QEMU).
  "dm_crypt",
  "ecb",
  "xts",
  "algif_skcipher",
  // Links machined creates (docs/network.md): rtnetlink asks for `rtnl-link-bond` and the like
  // through modprobe, which the node does not have, so the drivers are loaded at boot (bonding
  // with the parameters below).
  "bonding",
  "8021q",
  "bridge",
  // WireGuard interfaces (platform/wireguard): the rtnetlink kind `wireguard` needs the module,
  // which the node has no modprobe helper to request; its closure (udp_tunnel, ip6_udp_tunnel,
  // libchacha20poly1305, libcurve25519...) is shipped with it.
  "wireguard",
  // containerd's default snapshotter (overlayfs): without the module containerd starts and its
  // CRI reports RuntimeReady, but every image pull fails to unpack (issue 32's registry pull).
  "overlay",
];

/** The mtime every initramfs entry and ESP file carries (SOURCE_DATE_EPOCH). */
export const SOURCE_DATE_EPOCH = 1_700_000_000;

/**
 * Parameters the node loads an image module with (its modules list carries
 * them after the path). `bonding` would otherwise make a `bond0` of its own at
 * load (max_bonds defaults to 1), a link machined did not create and so must
 * never take over: a configured `bond0` then failed in QEMU with "a link of
 * that name exists and machined did not create it".
 */
export const IMAGE_MODULE_PARAMS: Readonly<Record<string, string>> = {
  bonding: "max_bonds=0",
};
