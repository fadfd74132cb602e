import assert from "node:assert/strict";
import { configCandidates, parseCmdline } from "./cmdline.ts";

Deno.test("parses key=value, flags and quoted values; stops at --", () => {
  const m = parseCmdline('console=ttyS0 quiet machined.config=/x.yaml a="b c" -- run -A');
  assert.equal(m.get("console"), "ttyS0");
  assert.equal(m.get("quiet"), "");
  assert.equal(m.get("machined.config"), "/x.yaml");
  assert.equal(m.get("a"), "b c");
  assert.equal(m.has("run"), false);
});

Deno.test("config candidates put STATE first, then the command line, then the image", () => {
  assert.deepEqual(configCandidates(parseCmdline("machined.config=/boot/c.yaml")).paths, [
    "/system/state/config.yaml",
    "/boot/c.yaml",
    "/etc/machined/config.yaml",
  ]);
  assert.equal(configCandidates(parseCmdline("machined.config.b64=eA==")).inline, "eA==");
});
