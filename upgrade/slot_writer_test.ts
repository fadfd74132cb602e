import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type FakeEspBackend, PowerCut } from "../platform/esp/mod.ts";
import { BundleError, SlotError } from "../bundle/mod.ts";
import { hostCompatible } from "../bundle/mod.ts";
import { planInstall } from "./slot_plan.ts";
import {
  blessBooted,
  installBundle,
  markBootedBad,
  readListing,
  rollbackSlot,
} from "./slot_writer.ts";
import { bootFake, chunked, imagedEsp, testBundle, testKeys } from "./testing.ts";

const machine = hostCompatible();

async function setup() {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0");
  const bundle = await testBundle({ key: k.signing, version: "2.0.0" });
  const install = (bytes = bundle.bytes, fake: FakeEspBackend = esp) =>
    installBundle(chunked(bytes, 500), { esp: fake, booted: "A", keys: [k.trusted], machine });
  return { k, esp, bundle, install };
}

/** Every file of slot A and its entry, hashed. */
function slotA(esp: FakeEspBackend): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, b] of esp.files) {
    if (p.startsWith("/A/") || p.startsWith("/loader/entries/machined-a")) {
      out[p] = createHash("sha256").update(b).digest("hex");
    }
  }
  return out;
}

Deno.test("install: B gets the bundle's files and a +3 trial entry; A untouched; next boot is B", async () => {
  const { esp, bundle, install } = await setup();
  const before = slotA(esp);
  const done = await install();
  assert.equal(done.plan.target, "B");
  assert.equal(done.plan.armedAs, "machined-b+3.conf");
  assert.deepEqual(esp.files.get("/B/root.img"), bundle.files[2]);
  assert.equal(esp.text("/loader/entries/machined-b.conf"), undefined, "the old B entry is gone");
  assert.match(esp.text("/loader/entries/machined-b+3.conf")!, /^version 2$/m);
  assert.match(esp.text("/loader/entries/machined-b+3.conf")!, /machined\.slot=B/);
  assert.deepEqual(slotA(esp), before);
  assert.ok(!esp.wroteWhileReadOnly);
  assert.equal(esp.writeSessions, 2, "written in two read-write sessions only");
  assert.deepEqual(bootFake(esp), { slot: "B", entry: "machined-b+2-1.conf", rootOk: true });
});

Deno.test("machine.upgrade.boot_tries: one try arms machined-b+1; a trial that fails it sends the next boot to A", async () => {
  const { k, esp, bundle } = await setup();
  const done = await installBundle(chunked(bundle.bytes, 500), {
    esp,
    booted: "A",
    keys: [k.trusted],
    machine,
    trialTries: 1,
  });
  assert.equal(done.plan.armedAs, "machined-b+1.conf");
  assert.deepEqual(bootFake(esp), { slot: "B", entry: "machined-b+0-1.conf", rootOk: true });
  assert.equal(bootFake(esp)?.slot, "A", "B never blessed, no tries left: back on A");
});

Deno.test("boot tries outside 1..10 are refused before anything is written (bad-tries)", async () => {
  const { k, esp, bundle } = await setup();
  const before = new Map(esp.files);
  for (const trialTries of [0, 11, 1.5]) {
    await assert.rejects(
      installBundle(chunked(bundle.bytes, 500), {
        esp,
        booted: "A",
        keys: [k.trusted],
        machine,
        trialTries,
      }),
      (e) => e instanceof SlotError && e.reason === "bad-tries",
    );
  }
  assert.deepEqual(new Map(esp.files), before);
});

Deno.test("a file that reads back wrong is never armed (verify-failed) and B's previous image and entry stay", async () => {
  const { esp, install } = await setup();
  const slotB = () =>
    [...esp.files].filter(([p]) => p.startsWith("/B/") || p.includes("/machined-b"))
      .map(([p, b]) => `${p} ${createHash("sha256").update(b).digest("hex")}`).sort();
  const before = slotB();
  esp.onRead = (path, b) => (path === "/B/initramfs.img.new" ? b.map((x) => x ^ 1) : b);
  const refused = await install().catch((e) => e);
  assert.ok(refused instanceof SlotError && refused.reason === "verify-failed", String(refused));
  assert.match(refused.message, /slot B's previous image and entry are kept/);
  assert.deepEqual(slotB(), before, "B's files and entry as they were, no *.new left");
  assert.equal(bootFake(esp)!.slot, "A");
  // Roll back to B still works: its blessed image is whole.
  assert.equal(await rollbackSlot(esp, "A"), "B");
  assert.deepEqual(bootFake(esp), { slot: "B", entry: "machined-b.conf", rootOk: true });
});

Deno.test("install reports received, verified, written, armed in order", async () => {
  const { k, esp, bundle } = await setup();
  const phases: string[] = [];
  await installBundle(chunked(bundle.bytes, 500), {
    esp,
    booted: "A",
    keys: [k.trusted],
    machine,
    onEvent: (e) => phases.push(e.phase),
  });
  assert.deepEqual(phases.filter((p, i) => p !== phases[i - 1]), [
    "verified",
    "received",
    "written",
    "armed",
  ]);
});

Deno.test("a panicking trial: B three times, then A by itself; B is left +0-3", async () => {
  const { esp, install } = await setup();
  await install();
  const slots = [1, 2, 3, 4, 5].map(() => bootFake(esp)!.slot);
  assert.deepEqual(slots, ["B", "B", "B", "A", "A"]);
  assert.ok(esp.files.has("/loader/entries/machined-b+0-3.conf"));
});

Deno.test("bless: the healthy trial drops its counter and stays the default on later boots", async () => {
  const { esp, install } = await setup();
  await install();
  assert.equal(bootFake(esp)!.entry, "machined-b+2-1.conf");
  assert.equal(await blessBooted(esp, "B"), true);
  assert.ok(esp.files.has("/loader/entries/machined-b.conf"));
  assert.equal(await blessBooted(esp, "B"), false, "blessing twice is a no-op");
  assert.deepEqual([bootFake(esp)!.slot, bootFake(esp)!.slot], ["B", "B"]);
});

Deno.test("rollback: back to A (re-armed with the top generation); refused for an empty or bad slot", async () => {
  const { esp, install } = await setup();
  await install();
  bootFake(esp);
  await blessBooted(esp, "B");
  assert.equal(await rollbackSlot(esp, "B"), "A");
  assert.match(esp.text("/loader/entries/machined-a.conf")!, /^version 3$/m);
  assert.equal(bootFake(esp)!.slot, "A");
  // B is blessed, so rolling back again is allowed; a bad slot is not.
  const bad = imagedEsp();
  bad.files.set(
    "/loader/entries/machined-b+0-3.conf",
    bad.files.get("/loader/entries/machined-b.conf")!,
  );
  bad.files.delete("/loader/entries/machined-b.conf");
  await assert.rejects(
    rollbackSlot(bad, "A"),
    (e) => e instanceof SlotError && e.reason === "slot-bad",
  );
  const empty = imagedEsp();
  empty.files.delete("/loader/entries/machined-b.conf");
  await assert.rejects(
    rollbackSlot(empty, "A"),
    (e) => e instanceof SlotError && e.reason === "nothing-to-roll-back",
  );
});

Deno.test("the plan never names the booted slot, booted A or B", async () => {
  const { esp, bundle } = await setup();
  const listing = await esp.read(readListing);
  for (const booted of ["A", "B"] as const) {
    const plan = planInstall(listing, booted, bundle.manifest);
    const all = JSON.stringify([
      plan.clean,
      plan.receive,
      plan.settle,
      plan.verify,
      plan.commit,
      plan.arm,
    ]);
    assert.ok(!all.includes(`"/${booted}/`), `plan for booted ${booted} names /${booted}/`);
    assert.ok(!all.includes(`machined-${booted.toLowerCase()}.`), "nor its entry");
  }
  assert.throws(() => planInstall(listing, undefined, bundle.manifest), SlotError);
});

Deno.test("a refused bundle changes nothing: its *.new files are removed, the entries are the same", async () => {
  const { esp, bundle, install } = await setup();
  const before = new Map(esp.files);
  const bytes = bundle.bytes.slice();
  bytes[bytes.length - 3] ^= 1;
  await assert.rejects(
    install(bytes),
    (e) => e instanceof BundleError && e.reason === "file-mismatch",
  );
  assert.deepEqual([...esp.files.keys()].sort(), [...before.keys()].sort());
  for (const [p, b] of before) assert.deepEqual(esp.files.get(p), b, p);
  assert.equal(bootFake(esp)!.slot, "A");
});

Deno.test("power cut at every write step: the next boot is A intact, or the verified B trial", async () => {
  const { bundle, install } = await setup();
  const full = imagedEsp();
  await install(bundle.bytes, full);
  const total = full.ops;
  const outcomes = new Set<string>();
  for (let cut = 0; cut <= total; cut++) {
    const esp = imagedEsp();
    const a = slotA(esp);
    esp.cutAt(cut);
    const r = await install(bundle.bytes, esp).then(() => "done", (e) => e);
    if (cut < total) assert.ok(r instanceof PowerCut, `cut at ${cut}: ${r}`);
    esp.powerOn();
    assert.deepEqual(slotA(esp), a, `cut at ${cut}: slot A changed`);
    const boot = bootFake(esp)!;
    assert.ok(boot.rootOk, `cut at ${cut}: slot ${boot.slot} does not verify`);
    outcomes.add(boot.slot);
    if (boot.slot === "B") assert.ok(cut >= total - 1, `cut at ${cut} (of ${total}) booted B`);
    // And an install after the cut (the leftovers cleaned) completes.
    await install(bundle.bytes, esp);
    assert.equal(bootFake(esp)!.slot, "B");
  }
  assert.deepEqual([...outcomes].sort(), ["A", "B"]);
});

Deno.test("a trial that never gets ready is marked bad (+0) and the other slot boots next", async () => {
  const { esp, install } = await setup();
  await install();
  assert.equal(bootFake(esp)!.entry, "machined-b+2-1.conf");
  assert.equal(await markBootedBad(esp, "B"), true);
  assert.ok(esp.files.has("/loader/entries/machined-b+0-1.conf"));
  assert.equal(bootFake(esp)!.slot, "A");
  assert.equal(await markBootedBad(esp, "A"), false, "a blessed slot is never marked bad");
});

Deno.test("a trial on its last try (+0) that never gets ready reboots to the other slot, renaming nothing; never when it is the only entry", async () => {
  const { k, esp, bundle } = await setup();
  await installBundle(chunked(bundle.bytes, 500), {
    esp,
    booted: "A",
    keys: [k.trusted],
    machine,
    trialTries: 1,
  });
  assert.equal(bootFake(esp)!.entry, "machined-b+0-1.conf");
  const before = new Map(esp.files);
  assert.equal(await markBootedBad(esp, "B"), true, "a failed last try reboots");
  assert.deepEqual(new Map(esp.files), before, "nothing renamed or written");
  assert.equal(bootFake(esp)!.slot, "A");
  // No other entry to fall back to: rebooting would start the same bad slot again.
  esp.files.delete("/loader/entries/machined-a.conf");
  assert.equal(await markBootedBad(esp, "B"), false, "no reboot loop on the only entry");
});

Deno.test("the downgrade floor: a version below the booted image's is refused, unless forced", async () => {
  const { k, esp } = await setup();
  const old = await testBundle({ key: k.signing, version: "0.9.0" });
  const before = new Map(esp.files);
  const deps = { esp, booted: "A" as const, keys: [k.trusted], machine };
  await assert.rejects(
    installBundle(chunked(old.bytes, 500), deps),
    (e) =>
      e instanceof SlotError && e.reason === "downgrade" &&
      /0\.9\.0 is below the running 1\.0\.0/.test(e.message),
  );
  assert.deepEqual(esp.files, before, "nothing written");
  const r = await installBundle(chunked(old.bytes, 500), { ...deps, force: true });
  assert.equal(r.manifest.version, "0.9.0");
  // A version without an order (a commit hash) is not refused when there is no floor.
  const hash = await testBundle({ key: k.signing, version: "e8f5269abcde" });
  await installBundle(chunked(hash.bytes, 500), {
    esp: imagedEsp("0c0ffee", true),
    booted: "A",
    keys: [k.trusted],
    machine,
  });
});

Deno.test("the downgrade floor recorded on STATE: above the running version but below the floor is refused, unless forced", async () => {
  const { k, esp } = await setup();
  const b = await testBundle({ key: k.signing, version: "1.5.0" });
  const before = new Map(esp.files);
  const deps = { esp, booted: "A" as const, keys: [k.trusted], machine, floor: "2.0.0" };
  await assert.rejects(
    installBundle(chunked(b.bytes, 500), deps),
    (e) =>
      e instanceof SlotError && e.reason === "downgrade" &&
      /1\.5\.0 is below the downgrade floor 2\.0\.0 \(recorded on STATE/.test(e.message),
  );
  assert.deepEqual(esp.files, before, "nothing written");
  const r = await installBundle(chunked(b.bytes, 500), { ...deps, force: true });
  assert.equal(r.floor.kind, "forced");
  const ok = await installBundle(
    chunked((await testBundle({ key: k.signing, version: "2.1.0" })).bytes, 500),
    { ...deps, booted: "B" },
  );
  assert.equal(ok.floor.kind, "allowed");
});

Deno.test("a bundle that drops a running system extension is refused with nothing written, unless forced", async () => {
  const { k, esp, bundle } = await setup();
  const hello = { name: "hello", version: "1.0", sha256: "ab".repeat(32), size: 4096 };
  const keeps = await testBundle({
    key: k.signing,
    version: "2.0.0",
    edit: (m) => (m.extensions = [{ ...hello, version: "1.1" }]),
  });
  const before = new Map(esp.files);
  const deps = {
    esp,
    booted: "A" as const,
    keys: [k.trusted],
    machine,
    runningExtensions: ["hello"],
  };
  await assert.rejects(
    installBundle(chunked(bundle.bytes, 500), deps),
    (e) =>
      e instanceof SlotError && e.reason === "extension-dropped" &&
      /drops system extension "hello"/.test(e.message),
  );
  assert.deepEqual(esp.files, before, "nothing written");
  const kept = await installBundle(chunked(keeps.bytes, 500), deps);
  assert.equal(kept.extensions.kind, "kept");
  assert.deepEqual(kept.manifest.extensions, [{ ...hello, version: "1.1" }]);
  const forced = await installBundle(chunked(bundle.bytes, 500), {
    ...deps,
    esp: imagedEsp("1.0.0"),
    force: true,
  });
  assert.equal(forced.extensions.kind, "forced");
});
