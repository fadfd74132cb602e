import assert from "node:assert/strict";
import { bundleCompatible } from "./image_bundle.ts";
import { hostArch } from "./arch/profiles.ts";
import { hostCompatible } from "../bundle/mod.ts";

Deno.test("a bundle names its image's architecture as the node's Deno.build.arch spells it", () => {
  assert.deepEqual(bundleCompatible("amd64").arch, "x86_64");
  assert.deepEqual(bundleCompatible("arm64").arch, "aarch64");
  assert.equal(bundleCompatible("arm64").board, bundleCompatible("amd64").board);
});

Deno.test("this host's own compatible matches a bundle built for its architecture", () => {
  assert.deepEqual(bundleCompatible(hostArch()), hostCompatible());
});

Deno.test("a Pi 3 image's bundle names its board; a UEFI one names uefi-pc", () => {
  assert.deepEqual(bundleCompatible("arm64", "rpi3"), { arch: "aarch64", board: "rpi3" });
  assert.equal(bundleCompatible("arm64").board, "uefi-pc");
});
