import assert from "node:assert/strict";
import {
  CAPABILITIES,
  capabilityNames,
  capabilityNumber,
  declaredSandbox,
  maskedMounts,
  parseSandboxStatus,
  readOnlyMounts,
  readSandbox,
} from "./sandbox.ts";

const STATUS = [
  "Name:\tsleep",
  "NoNewPrivs:\t1",
  "Seccomp:\t2",
  "Seccomp_filters:\t1",
  "CapInh:\t0000000000000400",
  "CapPrm:\t0000000000000400",
  "CapEff:\t0000000000000400",
  "CapBnd:\t0000000000000401",
  "CapAmb:\t0000000000000400",
].join("\n");

Deno.test("capability names and numbers follow linux/capability.h", () => {
  assert.equal(CAPABILITIES.length, 41);
  assert.equal(capabilityNumber("CAP_NET_BIND_SERVICE"), 10);
  assert.equal(capabilityNumber("CAP_SYS_ADMIN"), 21);
  assert.equal(capabilityNumber("CAP_CHECKPOINT_RESTORE"), 40);
  assert.throws(() => capabilityNumber("CAP_NOPE"), TypeError);
  assert.deepEqual(capabilityNames("0000000000000000"), []);
  assert.deepEqual(capabilityNames("0000000000000401"), ["CAP_CHOWN", "CAP_NET_BIND_SERVICE"]);
  assert.deepEqual(capabilityNames("000001ffffffffff").length, 41);
  assert.deepEqual(capabilityNames("0000080000000000"), ["cap_43"]);
});

Deno.test("the sandbox in force is parsed from /proc/PID/status", () => {
  assert.deepEqual(parseSandboxStatus("default", STATUS), {
    profile: "default",
    seccomp: "filter",
    noNewPrivs: true,
    effective: ["CAP_NET_BIND_SERVICE"],
    bounding: ["CAP_CHOWN", "CAP_NET_BIND_SERVICE"],
    ambient: ["CAP_NET_BIND_SERVICE"],
  });
  const plain = STATUS.replace("Seccomp:\t2", "Seccomp:\t0");
  assert.equal(parseSandboxStatus("unconfined", plain).seccomp, "disabled");
  assert.throws(() => parseSandboxStatus("default", "Name:\tx\n"), RangeError);
});

Deno.test("reading a process that is gone gives null", async () => {
  const proc = await Deno.makeTempDir();
  try {
    assert.equal(await readSandbox(4242, "default", proc), null);
    await Deno.mkdir(`${proc}/7`);
    await Deno.writeTextFile(`${proc}/7/status`, STATUS);
    assert.equal((await readSandbox(7, "default", proc))?.seccomp, "filter");
    await Deno.mkdir(`${proc}/8/status`, { recursive: true }); // unreadable as a file
    assert.equal(await readSandbox(8, "default", proc), null);
  } finally {
    await Deno.remove(proc, { recursive: true });
  }
});

Deno.test("a fake process is in exactly the sandbox it asked for", () => {
  assert.deepEqual(declaredSandbox({ seccomp: "unconfined" }, false, ["CAP_KILL"]), {
    profile: "unconfined",
    seccomp: "disabled",
    noNewPrivs: false,
    effective: ["CAP_KILL"],
    bounding: ["CAP_KILL"],
    ambient: [],
  });
});

Deno.test("readOnlyMounts keeps the asked paths mountinfo shows read-only", () => {
  const info = [
    "36 35 98:0 / / rw,relatime master:1 - ext4 /dev/root rw",
    "40 36 98:0 /tmp/a /tmp/a ro,relatime master:1 - ext4 /dev/root rw",
    "41 36 98:0 /tmp/b /tmp/b rw,relatime master:1 - ext4 /dev/root rw",
    "42 36 98:0 /tmp/c\\040d /tmp/c\\040d ro - ext4 /dev/root rw",
  ].join("\n");
  assert.deepEqual(readOnlyMounts(["/tmp/a", "/tmp/b", "/tmp/c d", "/tmp/e"], info), [
    "/tmp/a",
    "/tmp/c d",
  ]);
});

Deno.test("maskedMounts keeps the asked paths hidden by a read-only tmpfs or /dev/null on top", () => {
  const info = [
    "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw",
    "40 22 0:35 / /srv/secrets ro,relatime - tmpfs tmpfs ro,mode=000",
    "41 22 0:5 /null /srv/token ro,nosuid - devtmpfs udev rw,size=1k",
    "42 22 0:36 / /srv/rw rw,relatime - tmpfs tmpfs rw",
    "43 22 0:37 / /srv/data ro,relatime - ext4 /dev/vdb ro",
    "44 22 0:35 / /srv/with\\040space ro - tmpfs tmpfs ro",
    "45 22 0:38 / /srv/later ro - tmpfs tmpfs ro",
    "46 45 0:39 / /srv/later rw - tmpfs tmpfs rw",
  ].join("\n");
  assert.deepEqual(
    maskedMounts(
      ["/srv/secrets", "/srv/token", "/srv/rw", "/srv/data", "/srv/with space", "/srv/later", "/x"],
      info,
    ),
    ["/srv/secrets", "/srv/token", "/srv/with space"],
  );
});
