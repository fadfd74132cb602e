/**
 * Shared fixture setup of the machinectl tests that drive the CLI against the
 * real apid and machined-side server (api/testing.ts): a client config per
 * role, and one CLI run with its output captured.
 */
import { join } from "node:path";
import { addContext, contextFromPem, emptyClientConfig, writeClientConfig } from "../pki/mod.ts";
import type { Role } from "../pki/mod.ts";
import type { ApiFixture } from "../api/testing.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

/** A client config for `role` pointing at the fixture, written in the fixture's PKI dir. */
export async function clientConfig(f: ApiFixture, role: Role): Promise<string> {
  const path = join(f.pki.dir, `${role.slice(3)}.yaml`);
  const cert = f.pki.clients[role];
  const ctx = contextFromPem([f.endpoint], {
    caPem: f.pki.ca.certPem,
    certPem: cert.certPem,
    keyPem: cert.keyPem,
  });
  await writeClientConfig(path, addContext(emptyClientConfig(), "test", ctx));
  return path;
}

/** Run machinectl with `--config config` and `argv`; its exit code, stdout and stderr. */
export async function runCli(config: string, ...argv: string[]) {
  const io = bufferIo();
  const code = await runMachinectl(["--config", config, ...argv], io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}
