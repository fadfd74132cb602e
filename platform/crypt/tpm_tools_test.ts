import assert from "node:assert/strict";
import { toolArgv } from "./tpm_tools.ts";

Deno.test("tpm2-tools steps run through the multi-call tpm2 binary the image ships", () => {
  assert.deepEqual(toolArgv("device:/dev/tpmrm0", ["tpm2_unseal", "-c", "k.ctx"]), [
    "tpm2",
    "unseal",
    "-T",
    "device:/dev/tpmrm0",
    "-c",
    "k.ctx",
  ]);
});
