import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  KERNEL_CMDLINE_STATUS,
  type KernelCmdlineStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import { ControllerRuntime, FakeClock, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { FakeProcBackend } from "../../platform/procfs/mod.ts";
import { FakeBootCmdlineBackend } from "./boot_cmdline_backend_fake.ts";
import type { NextBoot } from "./boot_cmdline_backend.ts";
import { cmdlineController, cmdlineStatus } from "./cmdline_controller.ts";

const LINE = "console=ttyS0 quiet machined.slot=A rdinit=/init -- --v8-flags";
const ENTRY: NextBoot = { kind: "entry", slot: "A", file: "machined-a.conf", cmdline: LINE };

function setup(boot: NextBoot = ENTRY, procLine = LINE) {
  const clock = new FakeClock();
  const store = new Store<ResourceSpecs>({ clock });
  const runtime = new ControllerRuntime(store, { clock });
  const proc = new FakeProcBackend().setFile("cmdline", `${procLine}\n`);
  const backend = new FakeBootCmdlineBackend(boot);
  runtime.register(cmdlineController({ proc, boot: backend }));
  runtime.start();
  const setArgs = (args: string) => {
    const r = parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: n\n  kernel:\n    args: ${args}\n`,
      "t",
    );
    if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
    return store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "test", config: r.config }),
    );
  };
  const status = (pred: (s: KernelCmdlineStatusSpec) => boolean) =>
    waitForResource(store, KERNEL_CMDLINE_STATUS, (r) => pred(r.spec));
  return { clock, store, runtime, backend, proc, setArgs, status };
}

Deno.test("no config: the booted line is shown, nothing written, nothing pending", async () => {
  const t = setup();
  try {
    const s = await t.status(() => true);
    assert.deepEqual(s.spec, {
      booted: LINE,
      desiredAdd: [],
      desiredRemove: [],
      next: LINE,
      pending: [],
      state: "booted",
      reason: "",
    });
    assert.deepEqual(t.backend.writes, []);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("an added arg is written into the booted entry once and pending a reboot; booted after it", async () => {
  const t = setup();
  try {
    await t.setArgs("{add: [nosmt], remove: [quiet]}");
    const s = await t.status((s) => s.state === "pending-reboot");
    assert.deepEqual(s.spec.pending, ["nosmt", "-quiet"]);
    assert.match(
      s.spec.next,
      /^console=ttyS0 machined\.slot=A rdinit=\/init nosmt machined\.args=\S+ -- --v8-flags$/,
    );
    assert.match(
      s.spec.reason,
      /slot A's loader entry machined-a\.conf: booted at the next reboot/,
    );
    assert.deepEqual(t.backend.writes, [s.spec.next]);
    // The reboot: /proc/cmdline is now the entry's line; a re-run writes nothing more.
    t.proc.setFile("cmdline", `${s.spec.next}\n`);
    await t.setArgs("{add: [nosmt], remove: [quiet]}\n    modules: []");
    const b = await t.status((s) => s.state === "booted");
    assert.deepEqual(b.spec.pending, []);
    assert.equal(t.backend.writes.length, 1);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("under Secure Boot nothing is written and the status names the signed upgrade", async () => {
  const t = setup({ kind: "uki", slot: "B", file: "machined-b.conf" });
  try {
    await t.setArgs("{add: [nosmt], remove: []}");
    const s = await t.status((s) => s.state === "pending-upgrade");
    assert.deepEqual(s.spec.pending, ["nosmt"]);
    assert.equal(s.spec.next, "");
    assert.match(s.spec.reason, /signed UKI \(machined-b\.conf\).*next signed upgrade bundle/);
    assert.deepEqual(t.backend.writes, []);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a failed write is unwritable with the error and retried", async () => {
  const t = setup();
  try {
    t.backend.fail = new Error("the ESP is not discovered yet");
    await t.setArgs("{add: [nosmt], remove: []}");
    const s = await t.status((s) => s.state === "unwritable");
    assert.match(s.spec.reason, /retried in 30 s\): the ESP is not discovered yet/);
    t.backend.fail = undefined;
    t.clock.advance(30_000);
    await t.status((s) => s.state === "pending-reboot");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("cmdlineStatus: not booted from a slot says why; an escaped-looking line is kept raw", () => {
  const s = cmdlineStatus({ add: ["a=1"], remove: [] }, "x=\x1b[31m", {
    kind: "none",
    reason: "not booted from a slot",
  }, "");
  assert.equal(s.state, "unwritable");
  assert.equal(s.reason, "not booted from a slot");
  assert.equal(s.booted, "x=\x1b[31m");
});
