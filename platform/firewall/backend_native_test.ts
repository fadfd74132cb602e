import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeProcessBackend } from "../process/mod.ts";
import { NftFirewallBackend } from "./backend_native.ts";

// The fake process backend fails an unknown program with execve's ENOENT, as
// the native one does (the process conformance suite pins both). The native
// backend is not used here: its reaper would take the exits of every other
// test module's children under `--parallel` (ECHILD).
Deno.test({
  name: "nft backend without nft: remove has nothing to do, apply says why",
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const fw = new NftFirewallBackend({
        process: new FakeProcessBackend(),
        stateDir: dir,
        nft: "/nonexistent/nft",
      });
      await fw.remove({ family: "inet", name: "machined" });
      await assert.rejects(fw.apply("add table inet machined\n"), (e) => isSysError(e, "ENOENT"));
      assert.equal((await Deno.stat(`${dir}/ruleset.nft`)).mode! & 0o777, 0o600);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
