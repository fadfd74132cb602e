/**
 * One suite both cgroup backends pass: the fake always, the native one as root
 * under a scratch cgroup. A fixture says which limits its hierarchy supports,
 * since a v1 hierarchy carries only its own controller.
 * @module
 */
import assert from "node:assert/strict";
import type { CgroupBackend, CgroupLimits } from "./backend.ts";
import { CgroupError } from "./backend.ts";

/** A backend under test and limits its root supports. */
export interface CgroupFixture {
  backend: CgroupBackend;
  /** Two different limit sets to set and read back. */
  limits: [CgroupLimits, CgroupLimits];
  teardown?: () => Promise<void>;
}

/** Register the suite's tests under `name`. */
export function cgroupBackendConformance(
  name: string,
  make: () => Promise<CgroupFixture>,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (f: CgroupFixture) => Promise<void>) =>
    Deno.test({
      name: `${name}: ${title}`,
      ignore: options.ignore,
      fn: async () => {
        const f = await make();
        try {
          await fn(f);
        } finally {
          await f.teardown?.();
        }
      },
    });

  test("prepare writes limits, converges on new ones, and remove is idempotent", async (f) => {
    const [a, b] = f.limits;
    const path = await f.backend.prepare("svc-a", a);
    assert.match(path, /\/svc-a$/);
    assert.deepEqual(await f.backend.read("svc-a"), a);
    await f.backend.prepare("svc-a", b);
    assert.deepEqual(await f.backend.read("svc-a"), b);
    await f.backend.prepare("svc-a", {});
    assert.deepEqual(await f.backend.read("svc-a"), {});
    assert.deepEqual(await f.backend.pids("svc-a"), []);
    assert.equal(await f.backend.oomKills("svc-a"), 0);
    await f.backend.remove("svc-a");
    await f.backend.remove("svc-a");
    await assert.rejects(f.backend.read("svc-a"), (e) => e instanceof CgroupError);
  });

  test("names that would escape the root are refused", async (f) => {
    await assert.rejects(f.backend.prepare("../x", {}), RangeError);
  });
}
