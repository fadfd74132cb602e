import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { FakeBootIdSource } from "../platform/identity/boot_id.ts";
import { nodeActions } from "./node_actions.ts";

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
