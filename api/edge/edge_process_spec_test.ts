/**
 * machined-edge's command line: apid's flags, as apid gets them, then only the
 * edge limits that are set.
 */
import { deepEqual } from "node:assert/strict";
import { APID_DEFAULTS, apidArgs, type ApidOptions } from "../apid/apid_options.ts";
import { edgeArgs, edgeProcessSpec } from "./edge_process_spec.ts";

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

Deno.test("edgeArgs: apid's flags, then only the limits that are set", () => {
  deepEqual(edgeArgs(o), [
    "--pki-dir=/var/lib/machined/pki",
    "--socket=/run/machined/api.sock",
    "--listen=[::]:50000",
    "--read-max-bytes=1024",
    "--write-max-bytes=2048",
    "--max-concurrent-streams=64",
  ]);
  deepEqual(edgeArgs(o), apidArgs(o));
  deepEqual(edgeArgs(o, { idleTimeoutMs: 5000, maxHeaderBytes: 8192 }), [
    ...apidArgs(o),
    "--max-header-bytes=8192",
    "--idle-timeout-ms=5000",
  ]);
  deepEqual(edgeArgs(o, { watchFanout: "machined" }), [...apidArgs(o), "--watch-fanout=machined"]);
});

Deno.test("edgeProcessSpec: the binary, its flags, no privileges; machined-api when dropping", () => {
  const spec = edgeProcessSpec({ apid: o, binary: "/bin/edge", dropUser: true });
  deepEqual(spec.argv, ["/bin/edge", ...edgeArgs(o)]);
  deepEqual([spec.noNewPrivs, spec.newSession, spec.uid, spec.gid], [true, true, 50000, 50000]);
});
