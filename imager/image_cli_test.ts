import assert from "node:assert/strict";
import { parseArgs } from "./cli_args.ts";
import { IMAGE_ARGS, imageOptions } from "./image_cli.ts";

Deno.test("--generic builds with no config and no CA, and refuses either", () => {
  const o = imageOptions(parseArgs(["--generic"], IMAGE_ARGS));
  assert.equal(o.config, undefined);
  assert.equal(o.pki, undefined);
  for (const extra of [["--config", "node.yaml"], ["--pki", "pki"]]) {
    assert.throws(
      () => imageOptions(parseArgs(["--generic", ...extra], IMAGE_ARGS)),
      /--generic builds an image with no config and no CA/,
    );
  }
});

Deno.test("--arch takes arm64 (or aarch64) and refuses an unknown architecture", () => {
  assert.equal(imageOptions(parseArgs(["--arch", "arm64"], IMAGE_ARGS)).arch, "arm64");
  assert.equal(imageOptions(parseArgs(["--arch=aarch64"], IMAGE_ARGS)).arch, "arm64");
  assert.equal(imageOptions(parseArgs([], IMAGE_ARGS)).arch, undefined);
  assert.throws(
    () => imageOptions(parseArgs(["--arch", "mips"], IMAGE_ARGS)),
    /Unknown architecture "mips"/,
  );
});

Deno.test("--board takes rpi3 and refuses an unknown board", () => {
  assert.equal(imageOptions(parseArgs(["--board", "rpi3"], IMAGE_ARGS)).board, "rpi3");
  assert.equal(imageOptions(parseArgs([], IMAGE_ARGS)).board, undefined);
  assert.throws(
    () => imageOptions(parseArgs(["--board", "rpi4"], IMAGE_ARGS)),
    /Unknown board "rpi4"/,
  );
});
