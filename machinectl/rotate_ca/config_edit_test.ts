import assert from "node:assert/strict";
import { caOfConfigText, ConfigEditError, withCaSection } from "./config_edit.ts";

const CRT = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n";
const NEW = "-----BEGIN CERTIFICATE-----\nREVG\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n";
const TEXT = `version: v1alpha1
# the operator's comment
machine:
  hostname: node-1 # kept
  ca:
    crt: |
${CRT.trimEnd().split("\n").map((l) => "      " + l).join("\n")}
    key: |
${KEY.trimEnd().split("\n").map((l) => "      " + l).join("\n")}
`;

Deno.test("caOfConfigText reads machine.ca; withCaSection changes it alone, comments kept", () => {
  assert.deepEqual(caOfConfigText(TEXT, "f"), { crt: CRT, key: KEY, accepted: [] });
  const next = withCaSection(TEXT, "f", { crt: CRT, key: KEY, accepted: [NEW] });
  assert.match(next, /# the operator's comment/);
  assert.match(next, /hostname: node-1 # kept/);
  assert.deepEqual(caOfConfigText(next, "f"), { crt: CRT, key: KEY, accepted: [NEW] });
  const back = withCaSection(next, "f", { crt: NEW, key: KEY, accepted: [] });
  assert.deepEqual(caOfConfigText(back, "f"), { crt: NEW, key: KEY, accepted: [] });
  assert.doesNotMatch(back, /accepted/);
});

Deno.test("a text that is not YAML, has no machine mapping, or is too large is refused", () => {
  assert.throws(() => caOfConfigText("machine: [", "a.yaml"), ConfigEditError);
  assert.throws(() => caOfConfigText("version: v1alpha1\n", "b.yaml"), /no machine: mapping/);
  assert.throws(() => caOfConfigText("#".repeat(300 * 1024), "c.yaml"), /larger than/);
});
