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

Deno.test("absolute, parent and over-long names are refused", () => {
  throws(() => tar([{ name: "/etc/x", data: new Uint8Array() }]), RangeError);
  throws(() => tar([{ name: "a/../b", data: new Uint8Array() }]), RangeError);
  throws(() => tar([{ name: "x".repeat(300), data: new Uint8Array() }]), RangeError);
});
