/**
 * machined-init's system extension mount (src/extensions.rs) on the real
 * kernel: a squashfs whose hash matches the index is mounted read-only
 * (reads work, a write gets EROFS), one whose hash differs is refused with
 * the reason, in the outcome file machined reads. The cargo test is ignored
 * by plain `cargo test` (it needs root and loop devices); the root tier runs
 * it here.
 */
import assert from "node:assert/strict";

const isRoot = Deno.uid() === 0;
const hasMksquashfs = await Deno.stat("/usr/bin/mksquashfs").then(() => true, () => false);

Deno.test({
  name: "machined-init mounts a matching extension read-only and refuses a mismatch " +
    "(needs root, loop devices and mksquashfs)",
  ignore: !isRoot || !hasMksquashfs,
}, async () => {
  const manifest = new URL("./Cargo.toml", import.meta.url).pathname;
  const r = await new Deno.Command("cargo", {
    args: [
      "test",
      "--release",
      "--manifest-path",
      manifest,
      "--",
      "--ignored",
      "--exact",
      "extensions::tests::mounts_a_matching_extension_read_only_and_refuses_a_mismatch",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  assert.ok(r.success, out);
  assert.match(out, /test result: ok\. 1 passed/);
});
