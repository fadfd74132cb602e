/**
 * The API from stock tools: grpcurl (reflection list/describe and native gRPC
 * calls, without proto files) and curl (Connect JSON over HTTP/2 and HTTP/1.1).
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startApiFixture, withTimeout } from "../testing.ts";
import type { ApiFixture } from "../testing.ts";

const GRPCURL = join(Deno.env.get("HOME") ?? "/root", "go", "bin", "grpcurl");
const haveGrpcurl = await Deno.stat(GRPCURL).then(() => true, () => false);
if (!haveGrpcurl) {
  console.log(
    `skipping grpcurl tests: ${GRPCURL} is not installed ` +
      "(go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3)",
  );
}

async function run(
  cmd: string,
  args: string[],
  env?: Record<string, string>,
): Promise<{ code: number; out: string }> {
  const r = await withTimeout(
    new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).output(),
    20_000,
    `${cmd} ${args.at(-1)}`,
  );
  const td = new TextDecoder();
  return { code: r.code, out: td.decode(r.stdout) + td.decode(r.stderr) };
}

function creds(f: ApiFixture, who: string): string[] {
  const d = f.pki.dir;
  return ["-cacert", `${d}/ca.crt`, "-cert", `${d}/${who}.crt`, "-key", `${d}/${who}.key`];
}

Deno.test({
  name: "grpcurl: reflection list/describe and native gRPC calls (needs ~/go/bin/grpcurl)",
  ignore: !haveGrpcurl,
  fn: async () => {
    const f = await startApiFixture();
    try {
      const c = creds(f, "os-reader");
      const list = await run(GRPCURL, [...c, f.endpoint, "list"]);
      equal(list.code, 0, list.out);
      deepEqual(list.out.trim().split("\n").sort(), [
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "machined.v1.MachineService",
      ]);
      const svc = await run(GRPCURL, [...c, f.endpoint, "describe", "machined.v1.MachineService"]);
      equal(svc.code, 0, svc.out);
      ok(svc.out.includes("rpc Watch ( .machined.v1.WatchRequest ) returns ( stream"), svc.out);
      const msg = await run(GRPCURL, [...c, f.endpoint, "describe", "machined.v1.Resource"]);
      ok(msg.out.includes("oneof spec"), msg.out);
      const dep = await run(GRPCURL, [...c, f.endpoint, "describe", "google.protobuf.Struct"]);
      equal(dep.code, 0, dep.out);

      const get = await run(GRPCURL, [
        ...c,
        "-d",
        '{"type":"ms","id":"machine"}',
        f.endpoint,
        "machined.v1.MachineService/Get",
      ]);
      equal(get.code, 0, get.out);
      equal(JSON.parse(get.out).resource.machineStatus.stage, "MACHINE_STAGE_RUNNING");
      const denied = await run(GRPCURL, [...c, f.endpoint, "machined.v1.MachineService/Reboot"]);
      ok(denied.out.includes("PermissionDenied"), denied.out);
      const bad = await run(GRPCURL, [
        ...c,
        "-d",
        '{"type":"nope"}',
        f.endpoint,
        "machined.v1.MachineService/List",
      ]);
      ok(bad.out.includes("InvalidArgument") && bad.out.includes("known types"), bad.out);
    } finally {
      await f.close();
    }
  },
});

Deno.test({
  name:
    "grpcurl: a refused client certificate gets the TLS alert naming why (needs ~/go/bin/grpcurl)",
  ignore: !haveGrpcurl,
  fn: async () => {
    const f = await startApiFixture();
    try {
      const cases: [string, { certPem: string; keyPem: string }, RegExp][] = [
        ["foreign CA", f.pki.otherCa, /remote error: tls: unknown certificate authority/],
        ["expired", f.pki.expired, /remote error: tls: (expired certificate|certificate expired)/],
      ];
      for (const [what, cert, alert] of cases) {
        const crt = join(f.pki.dir, `refused-${what.replace(" ", "-")}.crt`);
        const key = crt.replace(/\.crt$/, ".key");
        await Deno.writeTextFile(crt, cert.certPem);
        await Deno.writeTextFile(key, cert.keyPem);
        const r = await run(GRPCURL, [
          "-connect-timeout",
          "3",
          "-cacert",
          `${f.pki.dir}/ca.crt`,
          "-cert",
          crt,
          "-key",
          key,
          f.endpoint,
          "list",
          // grpc-go retries a refused connection until the dial deadline and grpcurl then reports
          // only the deadline; the alert it got each time is in grpc-go's log.
        ], { GRPC_GO_LOG_SEVERITY_LEVEL: "info" });
        ok(r.code !== 0, `${what}: ${r.out}`);
        ok(alert.test(r.out), `${what}: ${r.out}`);
      }
    } finally {
      await f.close();
    }
  },
});

const haveCurl = await Deno.stat("/usr/bin/curl").then(() => true, () => false);

Deno.test({
  name: "curl: Connect JSON over HTTP/2 and HTTP/1.1 (needs curl)",
  ignore: !haveCurl,
}, async () => {
  const f = await startApiFixture();
  try {
    const d = f.pki.dir;
    const curl = (http: string, path: string, body: string, who = "os-reader") =>
      run("curl", [
        "-s",
        http,
        "--cacert",
        `${d}/ca.crt`,
        "--cert",
        `${d}/${who}.crt`,
        "--key",
        `${d}/${who}.key`,
        "-H",
        "Content-Type: application/json",
        "-d",
        body,
        `https://${f.endpoint}/machined.v1.MachineService/${path}`,
      ]);
    const v = await curl("--http2", "Version", "{}");
    equal(JSON.parse(v.out).version, "0.1.0-test");
    const l = await curl("--http1.1", "List", '{"type":"controllers"}');
    equal(JSON.parse(l.out).resources.length, 2);
    const denied = await curl("--http2", "Shutdown", "{}");
    equal(JSON.parse(denied.out).code, "permission_denied");
    const missing = await curl("--http2", "Get", '{"type":"ms","id":"nope"}');
    equal(JSON.parse(missing.out).code, "not_found");
    deepEqual(f.actions.calls, []);
  } finally {
    await f.close();
  }
});
