import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeMountBackend } from "./backend_fake.ts";
import { mountBackendConformance } from "./backend_conformance.ts";

mountBackendConformance("FakeMountBackend", () => {
  const backend = new FakeMountBackend().addDirectory("/scratch");
  return Promise.resolve({
    backend,
    root: "/scratch",
    mkdir: (p) => Promise.resolve(void backend.addDirectory(p)),
    makeBusy: (p) => Promise.resolve(backend.markBusy(p)),
  });
});

Deno.test("fake mount: stacked mounts, bind of a subtree, injected faults", async () => {
  const fake = new FakeMountBackend().addDirectory("/a").addDirectory("/b");
  await fake.mount({ source: "one", target: "/a", fstype: "tmpfs" });
  await fake.mount({ source: "two", target: "/a", fstype: "tmpfs" });
  assert.equal((await fake.mounts()).findLast((m) => m.mountPoint === "/a")?.source, "two");
  fake.addDirectory("/a/sub");
  await fake.bind("/a/sub", "/b");
  assert.equal((await fake.mounts()).findLast((m) => m.mountPoint === "/b")?.root, "/sub");
  fake.faults.failNext("mount", "EBUSY");
  await assert.rejects(
    fake.mount({ source: "x", target: "/a", fstype: "tmpfs" }),
    (e) => isSysError(e, "EBUSY"),
  );
  await fake.unmount("/a");
  assert.equal((await fake.mounts()).findLast((m) => m.mountPoint === "/a")?.source, "one");
});
