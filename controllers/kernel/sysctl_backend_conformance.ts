/**
 * One suite every {@link SysctlBackend} passes: the fake always, the /proc
 * backend over a temp tree always, and over the real /proc/sys as root in a
 * private network namespace (net.* keys are per namespace, so the host's
 * values are never touched).
 * @module
 */
import assert from "node:assert/strict";
import { isUnknownSysctl, type SysctlBackend, SysctlError } from "./sysctl_backend.ts";

/** A backend with one writable boolean key to exercise. */
export interface SysctlTarget {
  backend: SysctlBackend;
  /** A writable 0/1 key, dotted, e.g. `net.ipv4.ip_forward`. */
  key: string;
  /** A value the kernel refuses with EINVAL, when the backend validates (a plain file does not). */
  invalidValue?: string;
  /** Called after each test (restore values, remove temp trees). */
  cleanup?(): Promise<void>;
}

/**
 * Registers the suite under `name`. `validates: false` (a backend over plain
 * files, which the kernel does not check) replaces the EINVAL case with one
 * showing that any value is stored as given.
 */
export function sysctlBackendConformance(
  name: string,
  make: () => Promise<SysctlTarget>,
  options: { validates?: boolean } = {},
): void {
  const validates = options.validates ?? true;
  const test = (title: string, fn: (t: SysctlTarget) => Promise<void>) =>
    Deno.test(`${name}: ${title}`, async () => {
      const t = await make();
      const before = await t.backend.read(t.key);
      try {
        await fn(t);
      } finally {
        await t.backend.write(t.key, before);
        await t.cleanup?.();
      }
    });

  test("writes read back without the trailing newline", async ({ backend, key }) => {
    await backend.write(key, "1");
    assert.equal(await backend.read(key), "1");
    await backend.write(key, "0");
    assert.equal(await backend.read(key), "0");
  });

  test("dotted and slashed names address the same key", async ({ backend, key }) => {
    await backend.write(key.replaceAll(".", "/"), "1");
    assert.equal(await backend.read(key), "1");
  });

  test("an unknown key is ENOENT on read and write, and is not created", async ({ backend }) => {
    const unknown = "net.ipv4.machined_no_such_key";
    await assert.rejects(backend.read(unknown), (e) => {
      assert.ok(isUnknownSysctl(e));
      assert.equal(e.key, unknown);
      assert.equal(e.op, "read");
      return true;
    });
    await assert.rejects(backend.write(unknown, "1"), (e) => {
      assert.ok(e instanceof SysctlError);
      assert.equal(e.code, "ENOENT");
      assert.match(e.message, /Cannot write sysctl "net\.ipv4\.machined_no_such_key" = "1"/);
      return true;
    });
    await assert.rejects(backend.read(unknown), SysctlError);
  });

  if (validates) {
    test("a refused value is EINVAL and leaves the key as it was", async (t) => {
      assert.ok(t.invalidValue !== undefined, "a validating backend's target needs invalidValue");
      await t.backend.write(t.key, "1");
      await assert.rejects(
        t.backend.write(t.key, t.invalidValue),
        (e) => e instanceof SysctlError && e.code === "EINVAL" && e.value === t.invalidValue,
      );
      assert.equal(await t.backend.read(t.key), "1");
    });
  } else {
    test("without validation, any value is stored as given (the kernel validates)", async (t) => {
      await t.backend.write(t.key, "abc");
      assert.equal(await t.backend.read(t.key), "abc");
    });
  }
}
