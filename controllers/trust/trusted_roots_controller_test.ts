import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { createCertificateAuthority } from "../../pki/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  TRUSTED_ROOTS_STATUS,
  type TrustedRootsStatusSpec,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { FakeBundleFiles } from "./bundle_files_fake.ts";
import { SYSTEM_BUNDLE_PATH } from "./bundle_files.ts";
import { composeBundle, trustedRootsController } from "./trusted_roots_controller.ts";

const BUNDLE = "/run/machined/trust/ca-certificates.crt";

async function systemBundle(n: number): Promise<string> {
  const cas = await Promise.all(
    Array.from({ length: n }, (_, i) => createCertificateAuthority({ commonName: `sys ${i}` })),
  );
  return cas.map((c) => c.certPem.trimEnd() + "\n").join("");
}

function setup(files = new FakeBundleFiles()) {
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  const events = new EventBus();
  runtime.register(trustedRootsController({ files, bundlePath: BUNDLE, events }));
  runtime.start();
  const setRoots = (roots: [string, string][]) => {
    const yaml = roots.map(([name, pem]) =>
      `    - name: ${name}\n      pem: |\n${
        pem.trimEnd().split("\n").map((l) => `        ${l}`).join("\n")
      }\n`
    ).join("");
    const r = parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: n\n  trusted_roots:${yaml ? "\n" + yaml : " []"}\n`,
      "t",
    );
    if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
    return store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "test", config: r.config }),
    );
  };
  const status = (pred: (s: TrustedRootsStatusSpec) => boolean = () => true) =>
    waitForResource(store, TRUSTED_ROOTS_STATUS, (r) => pred(r.spec));
  return { store, runtime, files, events, setRoots, status };
}

Deno.test("composeBundle: system bundle first, then each root under its name; counts", async () => {
  const sys = await systemBundle(2);
  const ca = await createCertificateAuthority({ commonName: "registry CA" });
  const b = composeBundle(sys.trimEnd(), [{ name: "registry", pem: ca.certPem }]);
  assert.equal(b.systemCertificates, 2);
  assert.ok(b.text.startsWith(sys));
  assert.ok(b.text.endsWith(`# machined trusted root: registry\n${ca.certPem.trimEnd()}\n`));
  assert.deepEqual(b.roots.map((r) => [r.name, r.subject]), [[
    "registry",
    "O=machined, CN=registry CA",
  ]]);
  assert.equal(composeBundle(undefined, []).text, "");
});

Deno.test("before any config the system bundle is written; a root added, changed and removed rewrites it", async () => {
  const files = new FakeBundleFiles();
  const sys = await systemBundle(3);
  files.files.set(SYSTEM_BUNDLE_PATH, sys);
  const t = setup(files);
  try {
    const first = await t.status();
    assert.equal(first.metadata.id, "bundle");
    assert.deepEqual(
      [first.spec.path, first.spec.systemCertificates, first.spec.systemError, first.spec.roots],
      [BUNDLE, 3, "", []],
    );
    assert.equal(files.files.get(BUNDLE), sys);
    const a = await createCertificateAuthority({ commonName: "a" });
    await t.setRoots([["a", a.certPem]]);
    const withA = await t.status((s) => s.roots.length === 1);
    assert.notEqual(withA.spec.sha256, first.spec.sha256);
    assert.equal(withA.spec.roots[0].fingerprint.length, "SHA256:".length + 64);
    assert.equal(withA.spec.roots[0].notAfter, a.cert.notAfter.toISOString());
    assert.ok(files.files.get(BUNDLE)!.includes(a.certPem.trimEnd()));
    const b = await createCertificateAuthority({ commonName: "b" });
    await t.setRoots([["a", a.certPem], ["b", b.certPem]]);
    await t.status((s) => s.roots.length === 2);
    await t.setRoots([]);
    const back = await t.status((s) => s.roots.length === 0);
    assert.equal(back.spec.sha256, first.spec.sha256, "the same bytes give the same hash");
    assert.equal(files.files.get(BUNDLE), sys);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("an unchanged bundle is not rewritten", async () => {
  const files = new FakeBundleFiles();
  files.files.set(SYSTEM_BUNDLE_PATH, await systemBundle(1));
  const t = setup(files);
  try {
    await t.status();
    await t.setRoots([]);
    const s = await t.status();
    await t.setRoots([]);
    await t.status((x) => x.sha256 === s.spec.sha256);
    assert.deepEqual(files.writes, [BUNDLE]);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a missing or unreadable system bundle: the configured roots alone, with the reason", async () => {
  const files = new FakeBundleFiles();
  const t = setup(files);
  try {
    const s = await t.status();
    assert.equal(s.spec.systemError, `${SYSTEM_BUNDLE_PATH} does not exist`);
    const a = await createCertificateAuthority({ commonName: "a" });
    files.failRead.set(SYSTEM_BUNDLE_PATH, new Error("EACCES"));
    await t.setRoots([["a", a.certPem]]);
    const r = await t.status((x) => x.roots.length === 1);
    assert.match(r.spec.systemError, /cannot read .*: EACCES/);
    assert.equal(r.spec.systemCertificates, 0);
    assert.equal(files.files.get(BUNDLE), `# machined trusted root: a\n${a.certPem.trimEnd()}\n`);
  } finally {
    await t.runtime.stop();
  }
});
