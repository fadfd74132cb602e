import assert from "node:assert/strict";
import { EventBus, type MachineEvent } from "../../events/mod.ts";
import { EXTENSIONS_INDEX, EXTENSIONS_OUTCOME } from "../../layout/mod.ts";
import { EXTENSION_STATUS, type ResourceSpecs } from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { FakeExtensionFiles } from "./extension_files_fake.ts";
import { extensionStatusController, extensionStatuses } from "./extension_status.ts";

const A = "aa".repeat(32);
const B = "bb".repeat(32);
const entry = (name: string, sha256: string) => ({ name, version: "1.0", sha256, size: 4096 });

Deno.test("extensionStatuses: mounted only when machined-init mounted that very hash", () => {
  const index = [entry("hello", A), entry("tools", B), entry("gone", A), entry("other", A)];
  const out = extensionStatuses(index, [
    { name: "hello", version: "1.0", sha256: A, state: "mounted", reason: "" },
    { name: "tools", version: "1.0", sha256: B, state: "refused", reason: "hash mismatch: x" },
    { name: "other", version: "1.0", sha256: B, state: "mounted", reason: "" },
  ]);
  assert.deepEqual(out.map((s) => [s.name, s.state, s.reason]), [
    ["hello", "mounted", ""],
    ["tools", "refused", "hash mismatch: x"],
    ["gone", "refused", "machined-init did not mount it"],
    ["other", "refused", `machined-init saw sha256 ${B}`],
  ]);
  assert.equal(out[0].mountPoint, "/opt/extensions/hello");
});

Deno.test("extensionStatuses: a refused index refuses all; no outcome is unknown", () => {
  const index = [entry("hello", A)];
  const whole = extensionStatuses(index, [
    { name: "-", version: "-", sha256: "-", state: "refused", reason: "line 2: bad name" },
  ]);
  assert.equal(whole[0].state, "refused");
  assert.match(whole[0].reason, /the index was refused: line 2: bad name/);
  assert.equal(extensionStatuses(index, undefined)[0].state, "unknown");
  assert.deepEqual(extensionStatuses([], []), []);
});

Deno.test("the controller publishes ExtensionStatus from the files and reports a refusal once", async () => {
  const files = new FakeExtensionFiles();
  files.files.set(EXTENSIONS_INDEX, `hello 1.0 ${A} 4096\nbad 2.0 ${B} 8192\n`);
  files.files.set(
    EXTENSIONS_OUTCOME,
    `hello 1.0 ${A} mounted\nbad 2.0 ${B} refused hash mismatch: 8192 bytes sha256 ${A}\n`,
  );
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  const events = new EventBus();
  const seen: MachineEvent[] = [];
  const sub = (async () => {
    for await (const e of events.subscribe({ tail: 0 })) {
      seen.push(e);
      if (e.action === "extension-refused") break;
    }
  })();
  runtime.register(extensionStatusController({ files, events }));
  runtime.start();
  try {
    const bad = await waitForResource(store, EXTENSION_STATUS, (r) => r.metadata.id === "bad");
    assert.equal(bad.spec.state, "refused");
    assert.match(bad.spec.reason, /hash mismatch/);
    const hello = await waitForResource(store, EXTENSION_STATUS, (r) => r.metadata.id === "hello");
    assert.deepEqual(hello.spec, {
      name: "hello",
      version: "1.0",
      sha256: A,
      size: 4096,
      state: "mounted",
      mountPoint: "/opt/extensions/hello",
      reason: "",
    });
    await sub;
    const refused = seen.filter((e) => e.action === "extension-refused");
    assert.equal(refused.length, 1);
    assert.match(refused[0].message, /"bad" 2\.0 was refused at boot and is not mounted/);
  } finally {
    await runtime.stop();
  }
});
