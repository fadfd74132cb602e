import assert from "node:assert/strict";
import { parseExtensionIndex, parseExtensionOutcome } from "./extensions.ts";

const H = "ab".repeat(32);

Deno.test("machined-init's outcome lines are read: mounted, refused with the reason", () => {
  const text = `hello 1.0 ${H} mounted\nbad 2 ${H} refused hash mismatch: 3 bytes\n` +
    "- - - refused extension index line 1: bad name\ngarbage\n";
  assert.deepEqual(parseExtensionOutcome(text), [
    { name: "hello", version: "1.0", sha256: H, state: "mounted", reason: "" },
    { name: "bad", version: "2", sha256: H, state: "refused", reason: "hash mismatch: 3 bytes" },
    {
      name: "-",
      version: "-",
      sha256: "-",
      state: "refused",
      reason: "extension index line 1: bad name",
    },
  ]);
});

Deno.test("the index skips lines machined-init would refuse and keeps at most 16", () => {
  assert.deepEqual(parseExtensionIndex(`# c\n../x 1 ${H} 3\nok 1 ${H} 3\nshort 1\n`), [
    { name: "ok", version: "1", sha256: H, size: 3 },
  ]);
  const many = Array.from({ length: 20 }, (_, i) => `e${i} 1 ${H} 3`).join("\n");
  assert.equal(parseExtensionIndex(many).length, 16);
});
