/**
 * Test support: a FakeCryptBackend tied to a FakeBlockBackend, so that what
 * "cryptsetup" does shows on the fake disk as it would on a real one: a
 * format writes the LUKS2 magic and label at the partition's start (probe
 * then sees `crypto_LUKS`), and an open adds the mapping as a block device
 * whose bytes (the plaintext) outlive a reboot ({@link reboot}).
 * @module
 */
import { FakeCryptBackend, type FormatOptions } from "../../platform/crypt/mod.ts";
import type { FakeBlockBackend } from "../../platform/block/mod.ts";
import { partitionPath } from "./device_path.ts";

const MiB = 1024 * 1024;

/** FakeCryptBackend whose headers and mappings live on `block`'s disks. */
export class LinkedFakeCrypt extends FakeCryptBackend {
  readonly #plaintext = new Map<string, Uint8Array>();

  constructor(readonly block: FakeBlockBackend, readonly disks: readonly string[]) {
    super();
  }

  override async format(device: string, key: Uint8Array, options: FormatOptions): Promise<void> {
    await super.format(device, key, options);
    const at = await this.#locate(device);
    const head = new Uint8Array(512);
    head.set([0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe, 0, 2]);
    head.set(new TextEncoder().encode(options.label ?? ""), 24);
    at.bytes.set(head, at.offset);
    this.#plaintext.set(device, new Uint8Array(at.size).fill(0x5a)); // decrypted noise
  }

  override async open(device: string, name: string, key: Uint8Array): Promise<string> {
    const mapped = await super.open(device, name, key);
    const plain = this.#plaintext.get(device) ?? new Uint8Array(4 * MiB);
    this.block.addDisk(mapped, plain.length);
    this.block.bytes(mapped).set(plain);
    return mapped;
  }

  override async close(name: string): Promise<void> {
    const device = this.mapped.get(name);
    if (device !== undefined) {
      this.#plaintext.set(device, this.block.bytes(`/dev/mapper/${name}`).slice());
    }
    await super.close(name);
  }

  /** The decrypted bytes of a closed volume (live: edits show at the next open). */
  plaintext(device: string): Uint8Array {
    const b = this.#plaintext.get(device);
    if (!b) throw new RangeError(`"${device}" was never formatted`);
    return b;
  }

  /** A reboot: every mapping closed (its plaintext kept for the next open). */
  async reboot(): Promise<void> {
    for (const name of [...this.mapped.keys()]) await this.close(name);
  }

  async #locate(device: string): Promise<{ bytes: Uint8Array; offset: number; size: number }> {
    for (const disk of this.disks) {
      const gpt = (await this.block.readGpt(disk).catch(() => undefined))?.table;
      const p = gpt?.partitions.find((x) => partitionPath(disk, x.number) === device);
      if (p) {
        const size = (p.lastLba - p.firstLba + 1) * 512;
        return { bytes: this.block.bytes(disk), offset: p.firstLba * 512, size };
      }
    }
    throw new RangeError(`no fake disk has partition "${device}"`);
  }
}
