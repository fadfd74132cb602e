import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { FakeBootIdSource } from "../platform/identity/mod.ts";
import { nodeActions } from "./node_actions.ts";
import { imageFacts } from "../layout/mod.ts";

Deno.test("Version carries the boot id; Reset is absent unless wired (dev mode: Unimplemented)", async () => {
  const boot = new FakeBootIdSource("b-1");
  const base = {
    hostname: () => "n1",
    logger: createLogger({ console: false }),
    onPower: () => {},
    commit: () => Promise.resolve("abc"),
  };
  const a = nodeActions({ ...base, bootId: () => boot.bootId() });
  assert.equal((await a.version()).bootId, "b-1");
  assert.equal(a.reset, undefined);
  const failing = nodeActions({ ...base, bootId: () => Promise.reject(new Error("no /proc")) });
  assert.equal((await failing.version()).bootId, "");
  const noId = nodeActions(base);
  assert.equal((await noId.version()).bootId, "");
});

Deno.test("Version after an upgrade: the new root's release record and the booted slot", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const releaseFile = `${dir}/release`;
    const cmdline = `${dir}/cmdline`;
    await Deno.writeTextFile(releaseFile, "deno=deno 2.9.3\nimage-version=2.0.0\nboard=uefi\n");
    await Deno.writeTextFile(cmdline, "console=ttyS0 machined.slot=B -- machined.slot=A\n");
    const a = nodeActions({
      hostname: () => "n1",
      logger: createLogger({ console: false }),
      onPower: () => {},
      commit: () => Promise.resolve("abc"),
      image: () => imageFacts({ releaseFile, cmdline }),
    });
    const v = await a.version();
    assert.equal(v.imageVersion, "2.0.0");
    assert.equal(v.slot, "B", "the word after `--` is the program's, not the kernel's");
    const dev = nodeActions({
      hostname: () => "n1",
      logger: createLogger({ console: false }),
      onPower: () => {},
      image: () => imageFacts({ releaseFile: `${dir}/none`, cmdline: `${dir}/none` }),
    });
    assert.deepEqual([(await dev.version()).imageVersion, (await dev.version()).slot], ["", ""]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
