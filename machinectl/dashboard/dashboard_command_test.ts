import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { createTestPki } from "../../api/testing.ts";
import { addContext, contextFromPem, emptyClientConfig, writeClientConfig } from "../../pki/mod.ts";
import { runMachinectl } from "../cli.ts";
import { bufferIo } from "../io.ts";

const ON_A_TERMINAL = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();

Deno.test({
  name: "machinectl dashboard without a terminal: exit 2 and says why, after checking the config" +
    (ON_A_TERMINAL ? " (needs a run without a terminal)" : ""),
  ignore: ON_A_TERMINAL,
  async fn() {
    const pki = await createTestPki();
    try {
      let io = bufferIo();
      let code = await runMachinectl(["--config", join(pki.dir, "none.yaml"), "dashboard"], io);
      equal(code, 1);
      match(io.stderr.join("\n"), /no client config at ".*none\.yaml"/);

      const path = join(pki.dir, "reader.yaml");
      const cert = pki.clients["os:reader"];
      const ctx = contextFromPem(["127.0.0.1:1"], {
        caPem: pki.ca.certPem,
        certPem: cert.certPem,
        keyPem: cert.keyPem,
      });
      await writeClientConfig(path, addContext(emptyClientConfig(), "test", ctx));
      io = bufferIo();
      code = await runMachinectl(["--config", path, "dashboard"], io);
      equal(code, 2);
      equal(
        io.stderr.join("\n"),
        "error: dashboard: needs a terminal on stdin and stdout, not a pipe or a file",
      );
    } finally {
      await Deno.remove(pki.dir, { recursive: true });
    }
  },
});
