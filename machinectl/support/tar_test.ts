import { deepEqual, equal, throws } from "node:assert/strict";
import { readTarGz, tar, tarGz } from "./tar.ts";

const enc = new TextEncoder();

Deno.test("tar.gz round-trips names (long ones split into the ustar prefix) and bytes", async () => {
  const long = `${"d".repeat(120)}/${"f".repeat(90)}.log`;
  const entries = [
    { name: "version.yaml", data: enc.encode("machined: 0.1.0\n") },
    { name: "empty.txt", data: new Uint8Array() },
    { name: long, data: enc.encode("x".repeat(1500)) },
  ];
  const back = await readTarGz(await tarGz(entries, 1_700_000_000_000));
  deepEqual(back.map((e) => [e.name, e.data.length, e.mtimeMs]), [
    ["version.yaml", 16, 1_700_000_000_000],
    ["empty.txt", 0, 1_700_000_000_000],
    [long, 1500, 1_700_000_000_000],
  ]);
  equal(new TextDecoder().decode(back[0].data), "machined: 0.1.0\n");
});

function hasTar(): boolean {
  try {
    return new Deno.Command("tar", { args: ["--version"], stdout: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("system tar reads the archive (ustar checksum and layout) (needs tar)", {
  ignore: !hasTar(),
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(
      `${dir}/b.tar.gz`,
      await tarGz([{ name: "logs/a.log", data: enc.encode("hi\n") }]),
    );
    const out = await new Deno.Command("tar", { args: ["-xzf", "b.tar.gz"], cwd: dir }).output();
    equal(out.code, 0, new TextDecoder().decode(out.stderr));
    equal(await Deno.readTextFile(`${dir}/logs/a.log`), "hi\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("modes and directories round-trip; setuid and setgid are never written", async () => {
  const back = await readTarGz(
    await tarGz([
      { name: "d", data: new Uint8Array(), directory: true, mode: 0o2750 },
      { name: "d/run", data: enc.encode("#!/bin/sh\n"), mode: 0o4755 },
      { name: "d/plain", data: enc.encode("x") },
      { name: "t", data: new Uint8Array(), directory: true, mode: 0o1777 },
    ]),
    { directories: true },
  );
  deepEqual(back.map((e) => [e.name, e.directory ?? false, e.mode]), [
    ["d", true, 0o750],
    ["d/run", false, 0o755],
    ["d/plain", false, 0o644],
    ["t", true, 0o1777],
  ]);
  deepEqual(
    (await readTarGz(await tarGz([{ name: "d", data: new Uint8Array(), directory: true }])))
      .length,
    0,
  );
  throws(() => tar([{ name: "d", data: enc.encode("x"), directory: true }]), RangeError);
});

Deno.test(
  "system tar extracts directories and modes (needs tar)",
  { ignore: !hasTar() },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeFile(
        `${dir}/m.tar.gz`,
        await tarGz([
          { name: "d", data: new Uint8Array(), directory: true, mode: 0o2750 },
          { name: "d/run", data: enc.encode("x"), mode: 0o4710 },
        ]),
      );
      const out = await new Deno.Command("tar", { args: ["-xpzf", "m.tar.gz"], cwd: dir }).output();
      equal(out.code, 0, new TextDecoder().decode(out.stderr));
      equal((await Deno.stat(`${dir}/d/run`)).mode! & 0o7777, 0o710);
      equal((await Deno.stat(`${dir}/d`)).mode! & 0o7777, 0o750);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("absolute, parent and over-long names are refused", () => {
  throws(() => tar([{ name: "/etc/x", data: new Uint8Array() }]), RangeError);
  throws(() => tar([{ name: "a/../b", data: new Uint8Array() }]), RangeError);
  throws(() => tar([{ name: "x".repeat(300), data: new Uint8Array() }]), RangeError);
});
