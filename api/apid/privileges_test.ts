/**
 * apid's privilege drop, checked against a real apid process started with
 * the exact argv machined uses (apidProcessSpec): the ready line's report must
 * say that read of the PKI directory was revoked (and `import`, which Deno
 * grants under --cached-only), that only the socket and the port are still
 * granted, and that nothing is granted without a scope.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { createTestPki, withTimeout } from "../testing.ts";
import { APID_DEFAULTS, type ApidOptions, apidPermissionFlags } from "./apid_options.ts";
import { apidProcessSpec } from "./apid_process_spec.ts";
import { apidGrants, describe } from "./privileges.ts";

function options(pkiDir: string): ApidOptions {
  return {
    ...APID_DEFAULTS,
    pkiDir,
    socketPath: join(pkiDir, "run", "api.sock"),
    hostname: "127.0.0.1",
    port: 0,
  };
}

Deno.test("the permission flags are exactly the grants", () => {
  const o = options("/p");
  deepEqual(apidPermissionFlags(o), [
    "--no-prompt",
    "--allow-read=/p,/p/run/api.sock",
    "--allow-write=/p/run/api.sock",
    "--allow-net=127.0.0.1,unix:/p/run/api.sock",
  ]);
  deepEqual(apidGrants(o).filter((g) => g.dropAfterStart).map(describe), ["read:/p"]);
  deepEqual(
    apidPermissionFlags({ ...o, hostname: "::", port: 50000 })[3],
    "--allow-net=[::]:50000,unix:/p/run/api.sock",
  );
});

Deno.test("a real apid reports what its spawn flags granted and what it revoked", async () => {
  const pki = await createTestPki();
  const o = options(pki.dir);
  await Deno.mkdir(join(pki.dir, "run"));
  await Deno.writeTextFile(o.socketPath, ""); // apid connects lazily; the path must exist to be granted
  const spec = apidProcessSpec({ apid: o });
  const child = new Deno.Command(spec.argv[0], {
    args: spec.argv.slice(1),
    env: { ...spec.env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let code: number | undefined;
  try {
    const ready = await withTimeout(readyLine(child.stdout), 60_000, "apid ready line");
    // Deno 2.9.3 grants import wholesale under --cached-only (the checkout's spawn).
    const cachedOnly = spec.argv.includes("--cached-only");
    deepEqual(ready.revoked, [`read:${pki.dir}`, ...(cachedOnly ? ["import"] : [])]);
    deepEqual(ready.kept, [
      `read:${o.socketPath}`,
      `write:${o.socketPath}`,
      "net:127.0.0.1",
      `net:unix:${o.socketPath}`,
    ]);
    deepEqual(ready.unscoped, []);
  } finally {
    child.kill("SIGTERM");
    code = (await child.status).code;
    await child.stderr.cancel();
    await Deno.remove(pki.dir, { recursive: true });
  }
  equal(code, 0, "apid stops cleanly on SIGTERM");
});

type Ready = { revoked: string[]; kept: string[]; unscoped: string[] };

async function readyLine(stdout: ReadableStream<Uint8Array>): Promise<Ready> {
  let buffer = "";
  for await (const chunk of stdout.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    for (const line of buffer.split("\n")) {
      if (line.startsWith('{"apid":"ready"')) return JSON.parse(line) as Ready;
    }
  }
  throw new Error(`apid exited without a ready line; stdout: ${buffer}`);
}
