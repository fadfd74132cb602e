import assert from "node:assert/strict";
import { formatPrivileges, parsePrivileges, readPrivileges } from "./apid_report.ts";

const STATUS = [
  "Name:\tmachined-edge",
  "Uid:\t50000\t50000\t50000\t50000",
  "Gid:\t50000\t50000\t50000\t50000",
  "CapInh:\t0000000000000000",
  "CapEff:\t0000000000000000",
  "NoNewPrivs:\t1",
  "",
].join("\n");

Deno.test("parsePrivileges reads the effective uid, CapEff, NoNewPrivs and the v2 cgroup", () => {
  assert.deepEqual(parsePrivileges(STATUS, "0::/system/apid\n"), {
    uid: 50000,
    capEff: "0000000000000000",
    noNewPrivs: true,
    cgroup: "/system/apid",
  });
});

Deno.test("parsePrivileges refuses a status without the fields or a v1-only cgroup file", () => {
  assert.throws(() => parsePrivileges("Name:\tx\n", "0::/\n"), /no Uid line/);
  assert.throws(() => parsePrivileges(STATUS, "4:memory:/x\n"), /no cgroup v2 line/);
});

Deno.test("formatPrivileges is the line the QEMU tier matches", () => {
  const line = formatPrivileges(42, {
    exe: "/machined/bin/machined-edge",
    ...parsePrivileges(STATUS, "0::/system/apid\n"),
    memoryMax: "67108864",
  });
  assert.equal(
    line,
    "machined: apid pid=42 exe=/machined/bin/machined-edge uid=50000 " +
      "cap_eff=0000000000000000 no_new_privs=1 cgroup=/system/apid memory_max=67108864",
  );
});

Deno.test("readPrivileges reads this process from the real /proc", async () => {
  const p = await readPrivileges(Deno.pid);
  assert.equal(p.uid, Deno.uid());
  assert.match(p.capEff, /^[0-9a-f]{16}$/);
  assert.ok(p.cgroup.startsWith("/"));
  assert.equal(p.exe, Deno.execPath());
});
