import assert from "node:assert/strict";
import { join } from "node:path";
import { buildUki } from "./uki.ts";
import { appendSections, PeFormatError, readPeLayout } from "./pe_sections.ts";
import { run } from "../run.ts";

const STUB = "/usr/lib/systemd/boot/efi/linuxx64.efi.stub";
const stub = await Deno.readFile(STUB).catch(() => undefined);
const has = async (cmd: string) =>
  (await new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`] }).output()).success;

function parts(cmdline = "console=ttyS0 machined.slot=A") {
  return {
    stub: stub!,
    kernel: new Uint8Array(10_000).fill(7),
    initramfs: new Uint8Array(3_000).fill(9),
    cmdline,
    osRelease: 'ID=machined\nVERSION_ID="1.0.0"\n',
    uname: "6.1.0-cloud-amd64",
  };
}

Deno.test({
  name:
    "a UKI is the stub with .osrel, .cmdline, .uname, .initrd and .linux; objdump reads it back",
  ignore: !stub || !(await has("objcopy")),
}, async () => {
  const uki = buildUki(parts());
  const layout = readPeLayout(uki);
  const names = layout.sections.map((s) => s.name);
  assert.deepEqual(names.slice(-5), [".osrel", ".cmdline", ".uname", ".initrd", ".linux"]);
  for (const s of layout.sections.slice(-5)) {
    assert.equal(s.virtualAddress % 4096, 0, `${s.name} starts on a page`);
    assert.equal(s.rawOffset % layout.fileAlignment, 0);
  }
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(join(dir, "uki.efi"), uki);
    const headers = await run("objdump", ["-h", join(dir, "uki.efi")]);
    assert.match(headers, /\.cmdline/);
    await run("objcopy", [
      "-O",
      "binary",
      "--dump-section",
      `.cmdline=${join(dir, "cmdline")}`,
      "--dump-section",
      `.linux=${join(dir, "linux")}`,
      join(dir, "uki.efi"),
      join(dir, "discard"),
    ]);
    // PE sections are padded to the file alignment; the stub reads VirtualSize bytes.
    const cmdline = new TextDecoder().decode(await Deno.readFile(join(dir, "cmdline")));
    assert.equal(cmdline.replace(/\0+$/, ""), "console=ttyS0 machined.slot=A");
    const linux = await Deno.readFile(join(dir, "linux"));
    assert.deepEqual(linux.subarray(0, 10_000), parts().kernel);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "a UKI build is reproducible and refuses what would break the image",
  ignore: !stub,
}, () => {
  assert.deepEqual(buildUki(parts()), buildUki(parts()));
  assert.throws(() => buildUki(parts("a\nb")), RangeError);
  const uki = buildUki(parts());
  assert.throws(
    () => appendSections(uki, [{ name: ".cmdline", data: new Uint8Array(1) }]),
    PeFormatError,
  );
  const many = Array.from({ length: 10 }, (_, i) => ({ name: `.s${i}`, data: new Uint8Array(1) }));
  assert.throws(() => appendSections(stub!, many), /no room/);
  assert.throws(() => readPeLayout(new Uint8Array(100)), PeFormatError);
});
