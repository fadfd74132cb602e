import assert from "node:assert/strict";
import { PROBE_BYTES, probeSuperblock } from "./probe.ts";

async function gunzip(url: URL): Promise<Uint8Array> {
  const stream = (await fetch(url)).body!.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// Heads of images made with mkfs.ext4/mkfs.xfs/mkfs.vfat/mkswap/genisoimage/cryptsetup; expectations
// from blkid.
const GOLDEN = [
  ["ext4", { type: "ext4", label: "STATE", uuid: "6f1c3e2a-1b2c-4d5e-8f90-a1b2c3d4e5f6" }],
  ["xfs", { type: "xfs", label: "EPHEMERAL", uuid: "1e2d3c4b-5a69-4788-9a0b-c1d2e3f40516" }],
  ["vfat", { type: "vfat", label: "EFI", uuid: "1234-ABCD" }],
  ["swap", { type: "swap", label: "SWAP1", uuid: "0a0b0c0d-0e0f-4011-8213-141516171819" }],
  // genisoimage -volid CIDATA -joliet -rock (a NoCloud config drive).
  ["iso9660", { type: "iso9660", label: "CIDATA", uuid: "2026-12-02-01-06-08-00" }],
  // cryptsetup luksFormat --type luks2 --label STATE --uuid ... (the first 16 KiB: the header).
  [
    "luks2",
    { type: "crypto_LUKS", label: "STATE", uuid: "2a7c0e1d-3b4f-4a5e-9c6d-7e8f90a1b2c3" },
  ],
] as const;

Deno.test("probe: golden superblocks", async () => {
  for (const [name, want] of GOLDEN) {
    const head = await gunzip(new URL(`./testdata/${name}.head.gz`, import.meta.url));
    assert.deepEqual(probeSuperblock(head), want, name);
  }
});

Deno.test("probe: a LUKS1 header, or the magic alone, is not taken for LUKS2", () => {
  const head = new Uint8Array(PROBE_BYTES);
  head.set([0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe, 0, 1]);
  assert.equal(probeSuperblock(head), undefined);
});

Deno.test("probe: nothing recognisable is undefined", () => {
  assert.equal(probeSuperblock(new Uint8Array(PROBE_BYTES)), undefined);
  assert.equal(probeSuperblock(new Uint8Array(10)), undefined);
});

async function tool(name: string): Promise<boolean> {
  for (const dir of ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]) {
    if (await Deno.stat(`${dir}/${name}`).then(() => true, () => false)) return true;
  }
  return false;
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  assert.ok(out.success, `${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

const MKFS: Array<[string, number, (f: string) => string[]]> = [
  ["mkfs.ext4", 8 << 20, (f) => ["mkfs.ext4", "-q", "-L", "LBL", f]],
  ["mkfs.xfs", 300 << 20, (f) => ["mkfs.xfs", "-q", "-L", "LBL", f]],
  ["mkfs.vfat", 40 << 20, (f) => ["mkfs.vfat", "-F", "32", "-n", "LBL", f]],
  ["mkfs.vfat", 8 << 20, (f) => ["mkfs.vfat", "-n", "LBL", f]],
  ["mkswap", 8 << 20, (f) => ["mkswap", "-L", "LBL", f]],
];

const haveBlkid = await tool("blkid");
const haveMkfs = new Map(await Promise.all(MKFS.map(async ([m]) => [m, await tool(m)] as const)));

Deno.test({
  name: "probe: agrees with blkid on freshly made filesystems (needs blkid from util-linux)",
  ignore: !haveBlkid,
}, async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "probe-" });
  try {
    for (const [mkfs, size, argv] of MKFS) {
      await t.step({
        name: `${argv("x").join(" ")} (needs ${mkfs})`,
        ignore: !haveMkfs.get(mkfs),
        fn: async () => {
          const file = `${dir}/img`;
          await Deno.remove(file).catch(() => {});
          const f = await Deno.open(file, { create: true, write: true });
          await f.truncate(size);
          f.close();
          const [cmd, ...args] = argv(file);
          await run(cmd, args);
          const blkid = Object.fromEntries(
            (await run("blkid", ["-o", "export", file])).trim().split("\n").map((l) => {
              const i = l.indexOf("=");
              return [l.slice(0, i), l.slice(i + 1)];
            }),
          );
          const head = new Uint8Array(PROBE_BYTES);
          const r = await Deno.open(file, { read: true });
          let got = 0;
          while (got < head.length) {
            const n = await r.read(head.subarray(got));
            if (n === null) break;
            got += n;
          }
          r.close();
          const fs = probeSuperblock(head);
          assert.deepEqual(fs, { type: blkid.TYPE, label: blkid.LABEL, uuid: blkid.UUID });
        },
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
