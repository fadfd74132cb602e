import assert from "node:assert/strict";
import { parseMachineConfig } from "../config/mod.ts";
import { TRIAL_READY_DEADLINE_MS, trialDeadlineMs } from "./node_wiring.ts";

Deno.test("the trial deadline is the config's machine.upgrade.trial_deadline, the default before a config", () => {
  assert.equal(trialDeadlineMs({ config: undefined }), TRIAL_READY_DEADLINE_MS);
  const parsed = parseMachineConfig(
    "version: v1alpha1\nmachine:\n  hostname: n\n  upgrade:\n    trial_deadline: 40m\n",
    "t.yaml",
  );
  assert.ok(parsed.ok);
  assert.equal(trialDeadlineMs({ config: parsed.config }), 40 * 60_000);
});
