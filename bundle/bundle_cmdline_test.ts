import assert from "node:assert/strict";
import { checkBundleCmdline, isNodeOwnedKey, parseVerityValue } from "./bundle_cmdline.ts";
import { BundleError } from "./errors.ts";

const R = "ab".repeat(32);
const S = "cd".repeat(32);

function refused(cmdline: string, why: RegExp): void {
  assert.throws(
    () => checkBundleCmdline(cmdline),
    (e) => e instanceof BundleError && e.reason === "bad-cmdline" && why.test(e.message),
    JSON.stringify(cmdline),
  );
}

Deno.test("a bundle's command line: printable ASCII only", () => {
  refused("a\nlinux /x", /U\+0A at 1/);
  refused("a\tb", /U\+09/);
  refused("a\u007f", /U\+7F/);
  refused("\u00e9", /U\+E9/);
  assert.equal(checkBundleCmdline("").words, "");
});

Deno.test("a bundle's command line: the node's words are refused before `--`, free after it", () => {
  for (
    const w of [
      "machined.slot=A",
      "machined.slot",
      "machined.root.sha256=x",
      "machined.root.fstype=erofs",
      "machined.root.anything=1",
      "machined.root",
    ]
  ) {
    refused(`console=ttyS0 ${w}`, /the node's to write/);
  }
  const ok = checkBundleCmdline("console=ttyS0  machined.watchdog=30 -- deno machined.slot=A");
  assert.deepEqual(ok, { words: "console=ttyS0 machined.watchdog=30 -- deno machined.slot=A" });
  assert.equal(isNodeOwnedKey("machined.slots"), false);
  assert.equal(isNodeOwnedKey("machined.config"), false);
});

Deno.test("a bundle's command line: its verity word is taken out, parsed once, and checked", () => {
  const got = checkBundleCmdline(`a machined.root.verity=${R},${S},20971 -- x`);
  assert.deepEqual(got, { words: "a -- x", verity: { rootHash: R, salt: S, dataBlocks: 20971 } });
  refused(`machined.root.verity=${R},${S},1 machined.root.verity=${R},${S},1`, /twice/);
  for (
    const bad of [
      `${R},${S}`,
      `${R},${S},0`,
      `${R},${S},01`,
      `${R},abc,1`,
      `${R.toUpperCase()},${S},1`,
      `${R},${S},1,2`,
      `${R},,1`,
    ]
  ) {
    assert.throws(() => parseVerityValue(bad), BundleError, bad);
  }
  assert.equal(parseVerityValue(`${R},00,1`).salt, "00");
});
