import assert from "node:assert/strict";
import { kernelCmdline } from "./cmdline.ts";
import { MACHINED_V8_FLAGS, v8FlagsArgs } from "../layout/mod.ts";
import { checkBundleCmdline } from "../bundle/mod.ts";
import {
  cmdlineWithVerity,
  loaderConf,
  loaderEntry,
  slotCmdline,
  slotPaths,
} from "../layout/mod.ts";
import { parseArgs } from "./cli_args.ts";
import { parseSize } from "./progress.ts";

Deno.test("machined-init is rdinit; it execs `deno run` on the program, given after --", () => {
  const c = kernelCmdline({ program: "js", quiet: true, append: "foo=bar" });
  assert.match(
    c,
    /^console=ttyS0,115200 panic=10 transparent_hugepage=never quiet loglevel=3 rdinit=\/sbin\/machined-init /,
  );
  assert.match(c, /DENO_DIR=\/run\/deno\/machined/);
  assert.ok(c.indexOf("foo=bar") < c.indexOf(" -- "));
  const v8 = v8FlagsArgs(MACHINED_V8_FLAGS).map((w) => ` ${w}`).join("");
  assert.ok(c.endsWith(`-- /usr/bin/deno run -A --no-config --no-lock${v8} /machined/main.js`));
});

Deno.test("a compiled binary is exec'd by machined-init with no Deno arguments", () => {
  const c = kernelCmdline({ program: "binary" });
  assert.equal(
    c,
    "console=ttyS0,115200 panic=10 transparent_hugepage=never rdinit=/sbin/machined-init -- /machined/machined",
  );
});

Deno.test("loader.conf boots the first of our entries at once; entries point at their slot's files", () => {
  assert.match(loaderConf(), /^default machined-\*$/m);
  assert.match(loaderConf(), /^timeout 0$/m);
  const b = loaderEntry("B", "console=ttyS0", { generation: 4, version: "1.2" });
  assert.match(b, /^sort-key machined$/m);
  assert.match(b, /^version 4$/m);
  assert.match(b, /^title machined 1\.2 \(slot B\)$/m);
  assert.match(b, /^linux \/B\/vmlinuz$/m);
  assert.match(b, /^initrd \/B\/initramfs\.img$/m);
  assert.match(b, /^options console=ttyS0$/m);
  assert.equal(slotPaths("A").entry, "/loader/entries/machined-a.conf");
});

Deno.test("parseSize understands binary units", () => {
  assert.equal(parseSize("2GiB"), 2n << 30n);
  assert.equal(parseSize("512M"), 512n << 20n);
  assert.equal(parseSize("4096"), 4096n);
  assert.throws(() => parseSize("2 parsecs"), RangeError);
});

Deno.test("parseArgs takes --k v, --k=v, flags and repeats; rejects unknown options", () => {
  const a = parseArgs(["--out", "x.img", "--module=a", "--module", "b", "--force"], {
    flags: ["force"],
    options: ["out", "module"],
  });
  assert.deepEqual(a.values.get("module"), ["a", "b"]);
  assert.deepEqual(a.values.get("out"), ["x.img"]);
  assert.ok(a.flags.has("force"));
  assert.throws(() => parseArgs(["--nope"], { flags: [], options: [] }), TypeError);
  assert.throws(() => parseArgs(["--out"], { flags: [], options: ["out"] }), TypeError);
});

Deno.test("a slot's entry names its slot and root image hash before --", () => {
  const h = "ab".repeat(32);
  assert.equal(
    slotCmdline("console=ttyS0 rdinit=/sbin/machined-init -- /usr/bin/deno run x", "B", {
      sha256: h,
      fstype: "squashfs",
    }),
    `console=ttyS0 rdinit=/sbin/machined-init machined.slot=B machined.root.sha256=${h} ` +
      "-- /usr/bin/deno run x",
  );
  assert.match(
    slotCmdline("console=ttyS0", "A", { sha256: h, fstype: "erofs" }),
    /machined\.root\.fstype=erofs$/,
  );
  assert.equal(slotCmdline("console=ttyS0", "A"), "console=ttyS0");
});

Deno.test("a root with a dm-verity tree adds one word: root hash, salt, data blocks", () => {
  const h = "ab".repeat(32);
  const verity = { rootHash: "cd".repeat(32), salt: "ef".repeat(32), dataBlocks: 20480 };
  assert.equal(
    slotCmdline("console=ttyS0 -- x", "A", { sha256: h, fstype: "squashfs", verity }),
    `console=ttyS0 machined.slot=A machined.root.sha256=${h} ` +
      `machined.root.verity=${"cd".repeat(32)},${"ef".repeat(32)},20480 -- x`,
  );
});

Deno.test("a bundle's command line carries the verity word; the slot's entry then has it once", () => {
  const verity = { rootHash: "cd".repeat(32), salt: "ef".repeat(32), dataBlocks: 7 };
  const bundled = cmdlineWithVerity("console=ttyS0 -- x", verity);
  assert.equal(
    bundled,
    `console=ttyS0 machined.root.verity=${"cd".repeat(32)},${"ef".repeat(32)},7 -- x`,
  );
  assert.equal(cmdlineWithVerity("console=ttyS0 -- x", undefined), "console=ttyS0 -- x");
  const root = { sha256: "ab".repeat(32), fstype: "squashfs" as const };
  assert.throws(() => slotCmdline(bundled, "B", root), /already carries machined.root.verity/);
  // The node takes the word out, checks it and writes it back once (upgrade/slot_cmdline.ts).
  const { words, verity: parsed } = checkBundleCmdline(bundled);
  assert.deepEqual(parsed, verity);
  const entry = slotCmdline(words, "B", { ...root, verity: parsed });
  assert.equal(entry.split("machined.root.verity=").length, 2);
  assert.ok(entry.indexOf("machined.root.verity=") < entry.indexOf(" -- "));
});
