/**
 * One suite both mount backends pass: the fake always, the native one as
 * root inside a private mount namespace (never the host's).
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import type { MountBackend } from "./backend.ts";
import type { MountInfo } from "./mountinfo.ts";

/** A backend under test and a scratch directory it may mount under. */
export interface MountFixture {
  backend: MountBackend;
  /** An existing directory to work in. */
  root: string;
  mkdir(path: string): Promise<void>;
  /** Keep `path` (a mount point) busy until the returned function is called. */
  makeBusy(path: string): Promise<() => void>;
  teardown?: () => Promise<void>;
}

async function at(backend: MountBackend, path: string): Promise<MountInfo | undefined> {
  return (await backend.mounts()).findLast((m) => m.mountPoint === path);
}

/** Register the suite's tests under `name`. */
export function mountBackendConformance(
  name: string,
  fixture: () => Promise<MountFixture>,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (f: MountFixture) => Promise<void>) =>
    Deno.test({
      name: `${name}: ${title}`,
      ignore: options.ignore,
      fn: async () => {
        const f = await fixture();
        try {
          await fn(f);
        } finally {
          await f.teardown?.();
        }
      },
    });

  test("tmpfs mount shows in the table, then unmounts cleanly", async (f) => {
    const dir = `${f.root}/tmp fs`; // a space, escaped as \040 by the kernel
    await f.mkdir(dir);
    await f.backend.mount({
      source: "machined-test",
      target: dir,
      fstype: "tmpfs",
      flags: ["nosuid", "nodev"],
      data: "size=1m",
    });
    const m = await at(f.backend, dir);
    assert.ok(m, "mount not listed");
    assert.equal(m.fstype, "tmpfs");
    assert.equal(m.source, "machined-test");
    assert.ok(m.options.includes("rw") && m.options.includes("nosuid"), m.options.join());
    assert.equal(await f.backend.unmount(dir), "clean");
    assert.equal(await at(f.backend, dir), undefined);
  });

  test("remountReadOnly makes it ro and keeps nosuid", async (f) => {
    const dir = `${f.root}/ro`;
    await f.mkdir(dir);
    await f.backend.mount({ source: "t", target: dir, fstype: "tmpfs", flags: ["nosuid"] });
    await f.backend.remountReadOnly(dir);
    const m = await at(f.backend, dir);
    assert.ok(m?.options.includes("ro") && m.options.includes("nosuid"), m?.options.join());
    await f.backend.remountReadOnly(dir); // idempotent
    await f.backend.unmount(dir);
  });

  test("a remount without ro makes a read-only mount read-write again", async (f) => {
    const dir = `${f.root}/rw-again`;
    await f.mkdir(dir);
    await f.backend.mount({ source: "t", target: dir, fstype: "tmpfs", flags: ["ro", "nosuid"] });
    await f.backend.mount({ target: dir, fstype: "tmpfs", flags: ["remount", "nosuid"] });
    const m = await at(f.backend, dir);
    assert.ok(m?.options.includes("rw") && m.options.includes("nosuid"), m?.options.join());
    assert.ok(m?.superOptions.includes("rw"), m?.superOptions.join());
    await f.backend.unmount(dir);
  });

  test("read-only bind leaves the source writable", async (f) => {
    const src = `${f.root}/src`;
    const dst = `${f.root}/dst`;
    await f.mkdir(src);
    await f.mkdir(dst);
    await f.backend.mount({ source: "t", target: src, fstype: "tmpfs" });
    await f.backend.bind(src, dst, { readOnly: true });
    const s = await at(f.backend, src);
    const d = await at(f.backend, dst);
    assert.equal(d?.fstype, "tmpfs");
    assert.ok(d?.options.includes("ro"), d?.options.join());
    assert.ok(s?.options.includes("rw"), s?.options.join());
    await f.backend.unmount(dst);
    await f.backend.unmount(src);
  });

  test("busy unmount fails with EBUSY, or detaches with the fallback", async (f) => {
    const dir = `${f.root}/busy`;
    await f.mkdir(dir);
    await f.backend.mount({ source: "t", target: dir, fstype: "tmpfs" });
    const release = await f.makeBusy(dir);
    try {
      await assert.rejects(f.backend.unmount(dir), (e) => isSysError(e, "EBUSY"));
      assert.equal(await f.backend.unmount(dir, { detach: true }), "detached");
      assert.equal(await at(f.backend, dir), undefined);
    } finally {
      release();
    }
  });

  test("errors are typed: ENOENT target, EINVAL non-mount-point", async (f) => {
    await assert.rejects(
      f.backend.mount({ source: "t", target: `${f.root}/missing`, fstype: "tmpfs" }),
      (e) => isSysError(e, "ENOENT") && e.op === "mount",
    );
    const dir = `${f.root}/plain`;
    await f.mkdir(dir);
    await assert.rejects(
      f.backend.unmount(dir),
      (e) => isSysError(e, "EINVAL") && e.op === "umount2",
    );
  });
}
