import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { nativeProcessBackend } from "../process/mod.ts";
import { NftFirewallBackend } from "./backend_native.ts";

const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);

Deno.test({
  name: "nft backend without nft: remove has nothing to do, apply says why (needs the addon)",
  ignore: !haveAddon,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const fw = new NftFirewallBackend({
        process: nativeProcessBackend(),
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
