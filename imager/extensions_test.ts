import assert from "node:assert/strict";
import {
  addExtensions,
  extensionIndex,
  parseExtensionArg,
  parseExtensionRelease,
  readExtensions,
} from "./extensions.ts";
import { Rootfs } from "./initramfs/rootfs.ts";
import { parseExtensionIndex } from "../layout/mod.ts";
import { run } from "./run.ts";

const hasMksquashfs = await Deno.stat("/usr/bin/mksquashfs").then(() => true, () => false);

Deno.test("--extension NAME=FILE: the name must be able to be a path", () => {
  assert.deepEqual(parseExtensionArg("hello=build/h.squashfs"), {
    name: "hello",
    path: "build/h.squashfs",
  });
  for (
    const bad of ["hello", "=x", "hello=", "../x=y", "Hello=y", "a/b=y", `${"a".repeat(33)}=y`]
  ) {
    assert.throws(() => parseExtensionArg(bad), TypeError, bad);
  }
});

Deno.test("an extension-release file must be for machined and name a version", () => {
  assert.equal(parseExtensionRelease("h", "ID=machined\nSYSEXT_VERSION_ID=1.2.3\n"), "1.2.3");
  assert.equal(parseExtensionRelease("h", 'ID="_any"\nSYSEXT_VERSION_ID="0.1"'), "0.1");
  assert.throws(
    () => parseExtensionRelease("h", "ID=debian\nSYSEXT_VERSION_ID=1"),
    /ID=debian, not machined/,
  );
  assert.throws(() => parseExtensionRelease("h", "ID=machined\n"), /SYSEXT_VERSION_ID ""/);
  assert.throws(
    () => parseExtensionRelease("h", "ID=machined\nSYSEXT_VERSION_ID=1 2"),
    /is not a version/,
  );
});

Deno.test("the index the imager writes is the index the node reads", () => {
  const e = { name: "hello", path: "x", version: "1.0", sha256: "ab".repeat(32), size: 4096 };
  const text = extensionIndex([e, { ...e, name: "two" }]);
  assert.deepEqual(parseExtensionIndex(text), [
    { name: "hello", version: "1.0", sha256: e.sha256, size: 4096 },
    { name: "two", version: "1.0", sha256: e.sha256, size: 4096 },
  ]);
  const root = new Rootfs();
  addExtensions(root, [e]);
  assert.equal(root.get("/usr/lib/machined/extensions/hello.squashfs")?.type, "file");
  assert.equal(root.get("/opt/extensions/hello")?.type, "dir");
  assert.equal(root.get("/usr/lib/machined/extensions/index")?.type, "file");
});

Deno.test({
  name:
    "a squashfs extension is read, versioned and hashed; one without a release file is refused (needs mksquashfs)",
  ignore: !hasMksquashfs,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/t/usr/lib/extension-release.d`, { recursive: true });
    await Deno.mkdir(`${dir}/t/bin`);
    await Deno.writeTextFile(`${dir}/t/bin/x`, "x");
    await Deno.writeTextFile(
      `${dir}/t/usr/lib/extension-release.d/extension-release.hello`,
      "ID=machined\nSYSEXT_VERSION_ID=1.0\n",
    );
    await run("mksquashfs", [`${dir}/t`, `${dir}/h.squashfs`, "-quiet", "-no-progress"]);
    const [e] = await readExtensions([{ name: "hello", path: `${dir}/h.squashfs` }]);
    assert.equal(e.version, "1.0");
    assert.equal(e.size, (await Deno.stat(`${dir}/h.squashfs`)).size);
    assert.match(e.sha256, /^[0-9a-f]{64}$/);
    await assert.rejects(
      readExtensions([{ name: "other", path: `${dir}/h.squashfs` }]),
      /extension "other".*not a squashfs with \/usr\/lib\/extension-release\.d\/extension-release\.other/s,
    );
    await assert.rejects(
      readExtensions([{ name: "hello", path: `${dir}/h.squashfs` }, {
        name: "hello",
        path: `${dir}/h.squashfs`,
      }]),
      /given twice/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
