import assert from "node:assert/strict";
import { BUNDLE_DIR, planImageOut } from "./image_out.ts";

const running = { pid: 4242, image: "/src/build/machined.img", running: true };

Deno.test("a bundle build writes its disk under build/bundle/, never the disk up runs", () => {
  const plan = planImageOut({
    bundle: "x.bundle",
    arch: "amd64",
    host: "amd64",
    vm: running,
    cwd: "/src",
  });
  assert.deepEqual(plan, { out: `${BUNDLE_DIR}/machined.img` });
  const arm = planImageOut({ bundle: "x.bundle", arch: "arm64", host: "amd64", cwd: "/src" });
  assert.deepEqual(arm, { out: `${BUNDLE_DIR}/machined-arm64.img` });
});

Deno.test("no build replaces the disk of a running up VM; a stopped one's is fair game", () => {
  const plan = planImageOut({ arch: "amd64", host: "amd64", vm: running, cwd: "/src" });
  assert.ok("refuse" in plan);
  assert.match(plan.refuse, /QEMU pid 4242.*deno task down/s);
  const viaOut = planImageOut({
    out: "./build/../build/machined.img",
    bundle: "x.bundle",
    arch: "amd64",
    host: "amd64",
    vm: running,
    cwd: "/src",
  });
  assert.ok("refuse" in viaOut, "the same file by another spelling");
  const stopped = planImageOut({
    arch: "amd64",
    host: "amd64",
    vm: { ...running, running: false },
    cwd: "/src",
  });
  assert.deepEqual(stopped, { out: "build/machined.img" });
  const other = planImageOut({ out: "/tmp/x.img", arch: "amd64", host: "amd64", vm: running });
  assert.deepEqual(other, { out: "/tmp/x.img" });
});
