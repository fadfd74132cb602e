/**
 * `machinectl version` after an upgrade: the image's version and the booted
 * slot reach the terminal, through the real API handler (api/testing.ts).
 */
import { equal, match } from "node:assert/strict";
import { startApiFixture } from "../api/testing.ts";
import { clientConfig, runCli } from "./testing.ts";
import { formatServerVersion } from "./commands/version.ts";

Deno.test("version shows the image version and the booted slot", async () => {
  const f = await startApiFixture();
  try {
    const base = f.actions.version();
    f.actions.version = () => ({ ...base, imageVersion: "2.0.0", slot: "B" });
    const config = await clientConfig(f, "os:reader");
    const api = await f.client(f.pki.clients["os:reader"]).api.version({});
    equal(api.imageVersion, "2.0.0");
    equal(api.slot, "B");
    const r = await runCli(config, "version");
    equal(r.code, 0, r.err);
    match(r.out, /\tmachined 0\.1\.0-test \(test\)\n\timage 2\.0\.0, slot B\n\tdeno /);
  } finally {
    await f.close();
  }
});

Deno.test("version outside an image (dev mode) says so with dashes", () => {
  const text = formatServerVersion(
    "127.0.0.1:50000",
    {
      version: "0.1.0",
      commit: "",
      denoVersion: "2.9.3",
      os: "linux",
      arch: "x86_64",
      hostname: "dev",
      bootId: "",
      imageVersion: "",
      slot: "",
    } as Parameters<typeof formatServerVersion>[1],
  );
  match(text, /\tmachined 0\.1\.0\n\timage -, slot -\n/);
});
