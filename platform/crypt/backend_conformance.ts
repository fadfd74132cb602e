/**
 * One suite both crypt backends pass: the fake always, the native one as root
 * on a loop device with Debian's cryptsetup. Mapping a volume needs the
 * kernel's device-mapper; without it the mapping test is ignored by name.
 * @module
 */
import assert from "node:assert/strict";
import { type CryptBackend, KeyRejectedError, type Pbkdf, TOKEN_PREFIX } from "./backend.ts";

/** A backend and a device to use, and how to release them. */
export interface CryptFixture {
  backend: CryptBackend;
  device: string;
  cleanup(): Promise<void>;
}

/** Options of {@link cryptBackendConformance}. */
export interface CryptConformanceOptions {
  /** Ignore every test (with the reason in `name`). */
  ignore?: boolean;
  /** Ignore the open/close test (no device-mapper). */
  ignoreMapping?: boolean;
  /** A cheap key derivation for tests. */
  pbkdf?: Pbkdf;
}

const key = (s: string) => new TextEncoder().encode(s);
/** The cheapest argon2id cryptsetup accepts: tests measure behaviour, not cost. */
export const TEST_PBKDF: Pbkdf = { memoryKiB: 32, iterations: 4, parallel: 1 };

/** Register the suite's tests under `name`. */
export function cryptBackendConformance(
  name: string,
  make: () => Promise<CryptFixture>,
  options: CryptConformanceOptions = {},
): void {
  const pbkdf = options.pbkdf ?? TEST_PBKDF;
  const test = (
    title: string,
    fn: (b: CryptBackend, dev: string) => Promise<void>,
    ignore = false,
  ) =>
    Deno.test({
      name: `${name}: ${title}`,
      ignore: options.ignore || ignore,
      fn: async () => {
        const f = await make();
        try {
          await fn(f.backend, f.device);
        } finally {
          await f.cleanup();
        }
      },
    });

  test("format writes a LUKS2 header that only its key opens", async (b, dev) => {
    assert.equal(await b.isLuks(dev), false);
    await b.format(dev, key("first-key-123"), { slot: 1, pbkdf, label: "STATE" });
    assert.equal(await b.isLuks(dev), true);
    const info = await b.dump(dev);
    assert.deepEqual(info.slots, [{ slot: 1 }]);
    assert.equal(info.cipher, "aes-xts-plain64");
    assert.equal(info.sectorSize, 4096);
    assert.ok(info.dataOffset > 0);
    assert.equal(await b.testKey(dev, key("first-key-123")), true);
    assert.equal(await b.testKey(dev, key("first-key-123"), 1), true);
    assert.equal(await b.testKey(dev, key("wrong-key-456")), false);
  });

  test("tokens name each slot's kind and read back", async (b, dev) => {
    await b.format(dev, key("first-key-123"), { slot: 0, pbkdf });
    await b.importToken(dev, 0, { type: `${TOKEN_PREFIX}static`, keyslots: [0] });
    const t = await b.exportToken(dev, 0);
    assert.equal(t.type, "machined-static");
    assert.deepEqual(t.keyslots, [0]);
    assert.deepEqual((await b.dump(dev)).slots, [{ slot: 0, kind: "static" }]);
    await assert.rejects(b.exportToken(dev, 5), RangeError);
  });

  test("rotation: add a slot, prove it, kill the old one", async (b, dev) => {
    await b.format(dev, key("old-key-1234"), { slot: 0, pbkdf });
    await assert.rejects(
      b.addKey(dev, key("not-the-key"), key("new-key-5678"), 1),
      KeyRejectedError,
    );
    await b.addKey(dev, key("old-key-1234"), key("new-key-5678"), 1);
    assert.equal(await b.testKey(dev, key("new-key-5678"), 1), true);
    await b.killSlot(dev, 0);
    assert.deepEqual((await b.dump(dev)).slots.map((s) => s.slot), [1]);
    assert.equal(await b.testKey(dev, key("old-key-1234")), false);
    assert.equal(await b.testKey(dev, key("new-key-5678")), true);
  });

  test("erase: no header is left and no key opens", async (b, dev) => {
    await b.format(dev, key("first-key-123"), { slot: 0, pbkdf });
    await b.erase(dev);
    assert.equal(await b.isLuks(dev), false);
    assert.equal(await b.testKey(dev, key("first-key-123")).catch(() => false), false);
    await b.erase(dev); // idempotent
  });

  test("open maps the volume, close unmaps it (idempotent)", async (b, dev) => {
    await b.format(dev, key("first-key-123"), { slot: 0, pbkdf });
    await assert.rejects(b.open(dev, "conf-test", key("wrong-key-456")), KeyRejectedError);
    assert.equal(await b.open(dev, "conf-test", key("first-key-123")), "/dev/mapper/conf-test");
    // Opening it again over the same device is a no-op (the interface's idempotence).
    assert.equal(await b.open(dev, "conf-test", key("first-key-123")), "/dev/mapper/conf-test");
    await b.close("conf-test");
    await b.close("conf-test");
  }, options.ignoreMapping);
}
