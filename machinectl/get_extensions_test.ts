/**
 * `machinectl get extensions` against the real apid and machined-side server, on a store the
 * extensions controller published into (over fake files: the root image's index and
 * machined-init's outcome): the table and -o json, for every role (readers may read it); the
 * reason of a refused extension is printed escaped.
 */
import assert from "node:assert/strict";
import { startApiFixture } from "../api/testing.ts";
import { extensionsControllers, FakeExtensionFiles } from "../controllers/extensions/mod.ts";
import { EXTENSIONS_INDEX, EXTENSIONS_OUTCOME } from "../layout/mod.ts";
import type { Role } from "../pki/mod.ts";
import { EXTENSION_STATUS } from "../resources/mod.ts";
import { ControllerRuntime } from "../runtime/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { clientConfig, runCli } from "./testing.ts";

const A = "0123456789ab".repeat(5) + "cdef";
const B = "ba".repeat(32);

Deno.test("machinectl get extensions: table and json, for every role (readers may read it)", async () => {
  const f = await startApiFixture();
  const runtime = new ControllerRuntime(f.store);
  try {
    const files = new FakeExtensionFiles();
    files.files.set(EXTENSIONS_INDEX, `hello 1.0 ${A} 4096\nbad 2.0 ${B} 8192\n`);
    files.files.set(
      EXTENSIONS_OUTCOME,
      `hello 1.0 ${A} mounted\nbad 2.0 ${B} refused hash mismatch\x1b[31m\n`,
    );
    for (const c of extensionsControllers({ files })) runtime.register(c);
    runtime.start();
    await waitForResource(f.store, EXTENSION_STATUS, (x) => x.metadata.id === "bad");
    await waitForResource(f.store, EXTENSION_STATUS, (x) => x.metadata.id === "hello");
    for (const role of ["os:reader", "os:operator", "os:admin"] as Role[]) {
      const config = await clientConfig(f, role);
      const table = await runCli(config, "get", "extensions");
      assert.equal(table.code, 0, `${role}: ${table.err}`);
      const [head, ...rows] = table.out.trim().split("\n");
      assert.match(head, /VERSION\s+STATE\s+SHA256\s+MOUNT\s+REASON/);
      const hello = rows.find((r) => /\shello\s/.test(r)) ?? "";
      assert.match(
        hello,
        /ExtensionStatus\s+hello\s+\d+\s+1\.0\s+mounted\s+0123456789ab\s+\/opt\/extensions\/hello/,
      );
      const bad = rows.find((r) => /\sbad\s/.test(r)) ?? "";
      assert.match(bad, /refused\s+bababababa.*hash mismatch/);
      assert.ok(!bad.includes("\x1b"), "the reason's control characters are escaped");
    }
    const config = await clientConfig(f, "os:reader");
    const j = await runCli(config, "get", "ext", "hello", "-o", "json");
    assert.equal(j.code, 0, j.err);
    const json = JSON.parse(j.out);
    const spec = (Array.isArray(json) ? json[0] : json).spec;
    assert.equal(spec.sha256, A);
    assert.equal(spec.size, 4096);
    assert.equal(spec.state, "mounted");
  } finally {
    await runtime.stop();
    await f.close();
  }
});
