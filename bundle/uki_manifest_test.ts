/**
 * The manifest of a Secure Boot bundle (`boot: "uki"`): exactly the two UKIs
 * and the root image, in order, and no command line of its own (it is inside
 * each signed UKI); a plain bundle keeps its three files.
 */
import assert from "node:assert/strict";
import {
  generateSigningKey,
  loadSigningKey,
  type Manifest,
  MAX_UKI_BYTES,
  signManifest,
} from "./mod.ts";

const file = (name: string) => ({ name, size: 10, sha256: "ab".repeat(32) });

async function sign(m: Record<string, unknown>): Promise<unknown> {
  const key = await loadSigningKey((await generateSigningKey()).privatePem);
  return await signManifest(m as unknown as Manifest, key).catch((e) => e);
}

const base = { format: 1, compatible: { arch: "x86_64", board: "uefi-pc" }, version: "2.0.0" };

Deno.test("a UKI manifest carries exactly the two UKIs and the root image, and no cmdline", async () => {
  const ok = await sign({
    ...base,
    boot: "uki",
    cmdline: "",
    files: ["machined-a.efi", "machined-b.efi", "root.img"].map(file),
  });
  assert.equal(typeof ok, "string", String(ok));
  const withCmdline = await sign({
    ...base,
    boot: "uki",
    cmdline: "console=ttyS0",
    files: ["machined-a.efi", "machined-b.efi", "root.img"].map(file),
  });
  assert.match(String(withCmdline), /cmdline must be empty/);
  const plainFiles = await sign({
    ...base,
    boot: "uki",
    cmdline: "",
    files: ["vmlinuz", "initramfs.img", "root.img"].map(file),
  });
  assert.match(String(plainFiles), /machined-a\.efi, machined-b\.efi, root\.img in that order/);
  const ukisInPlain = await sign({
    ...base,
    cmdline: "",
    files: ["machined-a.efi", "machined-b.efi", "root.img"].map(file),
  });
  assert.match(String(ukisInPlain), /vmlinuz, initramfs\.img, root\.img in that order/);
  const otherBoot = await sign({ ...base, boot: "grub", cmdline: "", files: [] });
  assert.ok(otherBoot instanceof Error);
});

Deno.test("a UKI of exactly MAX_UKI_BYTES is accepted, one byte more is refused at the head", async () => {
  const uki = (size: number) => ({
    ...base,
    boot: "uki",
    cmdline: "",
    files: [
      { ...file("machined-a.efi"), size },
      file("machined-b.efi"),
      file("root.img"),
    ],
  });
  assert.equal(typeof await sign(uki(MAX_UKI_BYTES)), "string");
  assert.match(String(await sign(uki(MAX_UKI_BYTES + 1))), /a UKI is at most 67108864 bytes/);
});
