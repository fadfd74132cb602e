/**
 * machined-edge's command line: apid's flags, as apid gets them, then every
 * edge budget from api/edge/budgets.ts.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { APID_DEFAULTS, apidArgs, type ApidOptions } from "./apid_options.ts";
import { edgeArgs, edgeProcessSpec } from "./edge_process_spec.ts";
import { budgetArgs } from "./budgets.ts";

const o: ApidOptions = {
  ...APID_DEFAULTS,
  pkiDir: "/var/lib/machined/pki",
  socketPath: "/run/machined/api.sock",
  hostname: "::",
  port: 50000,
  readMaxBytes: 1024,
  writeMaxBytes: 2048,
  maxConcurrentStreams: 64,
};

Deno.test("edgeArgs: apid's flags, then every budget of the table, the limits set overriding", () => {
  deepEqual(apidArgs(o), [
    "--pki-dir=/var/lib/machined/pki",
    "--socket=/run/machined/api.sock",
    "--listen=[::]:50000",
    "--read-max-bytes=1024",
    "--write-max-bytes=2048",
    "--max-concurrent-streams=64",
  ]);
  deepEqual(edgeArgs(o), [...apidArgs(o), ...budgetArgs()]);
  deepEqual(edgeArgs(o).slice(6), [
    "--max-handshakes=128",
    "--max-handshakes-per-source=16",
    "--handshake-timeout-ms=5000",
    "--max-connections=512",
    "--max-connections-per-client=64",
    "--idle-timeout-ms=300000",
    "--max-streams-per-client=1024",
    "--max-streams=2048",
    "--max-header-bytes=16384",
  ]);
  const set = edgeArgs(o, { idleTimeoutMs: 5000, maxHeaderBytes: 8192 });
  ok(set.includes("--idle-timeout-ms=5000") && set.includes("--max-header-bytes=8192"));
  equal(set.length, edgeArgs(o).length);
  deepEqual(edgeArgs(o, { watchFanout: "machined" }), [
    ...apidArgs(o),
    ...budgetArgs(),
    "--watch-fanout=machined",
  ]);
});

Deno.test("edgeProcessSpec: the binary, its flags, no privileges; machined-api when dropping", () => {
  const spec = edgeProcessSpec({ apid: o, binary: "/bin/edge", dropUser: true });
  deepEqual(spec.argv, ["/bin/edge", ...edgeArgs(o)]);
  deepEqual([spec.noNewPrivs, spec.newSession, spec.uid, spec.gid], [true, true, 50000, 50000]);
  deepEqual(spec.sandbox, { seccomp: "default", capabilities: [] });
  deepEqual(edgeProcessSpec({ apid: o, binary: "/bin/edge" }).sandbox, { seccomp: "default" });
});
