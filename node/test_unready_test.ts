import assert from "node:assert/strict";
import { memoryLogger } from "../watchdog/testing.ts";
import { UNREADY_WORD, unreadyReason } from "./test_unready.ts";

Deno.test("the unready hook needs its word and a test image; the word alone is logged and ignored", () => {
  const logger = memoryLogger();
  const asked = new Map([[UNREADY_WORD, "1"]]);
  assert.match(unreadyReason(asked, true, logger) ?? "", /machined\.test\.unready=1/);
  assert.ok(logger.lines.some((l) => /^error boot: TEST HOOK/.test(l)), logger.lines.join("\n"));
  assert.equal(unreadyReason(asked, false, logger), undefined);
  assert.ok(logger.lines.some((l) => /ignored: this image was not built for tests/.test(l)));
  assert.equal(unreadyReason(new Map(), true, logger), undefined);
  assert.equal(unreadyReason(new Map([[UNREADY_WORD, "0"]]), true, logger), undefined);
});
