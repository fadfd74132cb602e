/**
 * Looking at a powered-off node's disk image from the host, for the QEMU
 * tests of encrypted volumes: a partition's byte range (by GPT name),
 * whether some bytes occur anywhere in the image, and the LUKS2 header of a
 * partition as the host's `cryptsetup luksDump` reads it (the header area is
 * copied to a scratch file: no loop device, nothing written to the image).
 * Also `machinectl unlock` as a process with the passphrase on its stdin.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readGpt } from "../platform/block/mod.ts";
import { sha256Range } from "./cidata.ts";

/** The byte range of the partition named `name` in a disk image file. */
export async function partitionRange(
  image: string,
  name: string,
): Promise<{ offset: number; length: number }> {
  const size = (await Deno.stat(image)).size;
  using f = await Deno.open(image, { read: true });
  const read = async (offset: number, length: number) => {
    await f.seek(offset, Deno.SeekMode.Start);
    const b = new Uint8Array(length);
    for (let got = 0; got < length;) got += (await f.read(b.subarray(got))) ?? length;
    return b;
  };
  const gpt = await readGpt(read, size, 512);
  const p = gpt?.table.partitions.find((x) => x.name === name);
  assert.ok(p, `the image has a ${name} partition`);
  return { offset: p.firstLba * 512, length: (p.lastLba - p.firstLba + 1) * 512 };
}

/**
 * Does `needle` occur in the file at `path` (in `range` when given)? Read in
 * 8 MiB chunks that overlap by the needle's length.
 */
export async function fileContains(
  path: string,
  needle: Uint8Array,
  range: { offset: number; length: number } = { offset: 0, length: Infinity },
): Promise<boolean> {
  using f = await Deno.open(path, { read: true });
  await f.seek(range.offset, Deno.SeekMode.Start);
  const chunk = 8 << 20;
  const buf = new Uint8Array(chunk + needle.length);
  let carry = 0;
  for (let left = range.length; left > 0;) {
    const n = await f.read(buf.subarray(carry, carry + Math.min(chunk, left)));
    if (n === null) return false;
    left -= n;
    const end = carry + n;
    if (indexOf(buf.subarray(0, end), needle) >= 0) return true;
    carry = Math.min(needle.length - 1, end);
    buf.copyWithin(0, end - carry, end);
  }
  return false;
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  const first = needle[0];
  for (let i = hay.indexOf(first); i >= 0 && i <= hay.length - needle.length;) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
    i = hay.indexOf(first, i + 1);
  }
  return -1;
}

/** A LUKS2 header as the host's cryptsetup reads it: its UUID and its token types. */
export interface HostLuksDump {
  uuid: string;
  tokens: string[];
}

/** `cryptsetup luksDump` of the header at `offset` in `image` (its first 16 MiB copied out). */
export async function luksDumpAt(
  image: string,
  offset: number,
  scratch: string,
): Promise<HostLuksDump> {
  const file = join(scratch, `header-${offset}.img`);
  {
    using src = await Deno.open(image, { read: true });
    await src.seek(offset, Deno.SeekMode.Start);
    const buf = new Uint8Array(16 << 20);
    for (let got = 0; got < buf.length;) got += (await src.read(buf.subarray(got))) ?? buf.length;
    await Deno.writeFile(file, buf);
  }
  try {
    const run = async (...args: string[]) => {
      const o = await new Deno.Command("cryptsetup", { args, stdout: "piped", stderr: "piped" })
        .output();
      const text = new TextDecoder().decode(o.stdout);
      assert.equal(o.code, 0, `cryptsetup ${args[0]}: ${new TextDecoder().decode(o.stderr)}`);
      return text;
    };
    const meta = JSON.parse(await run("luksDump", "--dump-json-metadata", file));
    const tokens = Object.values(meta.tokens ?? {}).map((t) =>
      String((t as { type: unknown }).type)
    );
    return { uuid: (await run("luksUUID", file)).trim(), tokens: tokens.sort() };
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/** A partition as a powered-off node left it: its range, LUKS2 UUID and SHA-256. */
export interface AtRest {
  range: { offset: number; length: number };
  uuid: string;
  sha: string;
}

/**
 * The checks of a powered-off node's disk that the issue's done-when asks
 * for: none of `secrets` (a canary from the config, the passphrases) occurs
 * in clear anywhere in `image`, and `volume`'s header, as the host's
 * cryptsetup reads it, carries each of `tokens`. Returns what a later boot
 * compares against (the partition's SHA-256: a locked STATE is never written).
 */
export async function checkAtRest(o: {
  image: string;
  scratch: string;
  volume: string;
  secrets: Record<string, string>;
  tokens: string[];
}): Promise<AtRest> {
  const enc = new TextEncoder();
  for (const [what, secret] of Object.entries(o.secrets)) {
    assert.equal(await fileContains(o.image, enc.encode(secret)), false, `${what} in clear`);
  }
  const range = await partitionRange(o.image, o.volume);
  const header = await luksDumpAt(o.image, range.offset, o.scratch);
  for (const t of o.tokens) assert.ok(header.tokens.includes(t), `${t}: ${header.tokens.join()}`);
  return { range, uuid: header.uuid, sha: await sha256Range(o.image, range.offset, range.length) };
}

/** `machinectl unlock VOLUME --insecure` as its own process, the passphrase written to its stdin. */
export async function unlockInsecure(
  port: number,
  volume: string,
  passphrase: string,
  fingerprint?: string,
): Promise<{ code: number; out: string; err: string }> {
  const main = new URL("../machinectl/main.ts", import.meta.url).pathname;
  const pin = fingerprint ? ["--fingerprint", fingerprint] : [];
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--cached-only",
      main,
      "unlock",
      volume,
      "--insecure",
      ...pin,
      "-e",
      `127.0.0.1:${port}`,
    ],
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(passphrase + "\n"));
  await w.close();
  const o = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: o.code, out: text(o.stdout), err: text(o.stderr) };
}
