import { startApiFixture } from "./api/testing.ts";
const f = await startApiFixture();
const dir = f.pki.dir;
const p = new Deno.Command("curl", { args: ["-s", "--http2", "--max-time", "5", "--cacert", `${dir}/ca.crt`, "--cert", `${dir}/os-admin.crt`, "--key", `${dir}/os-admin.key`, "-H", "content-type: application/grpc", "-H", "te: trailers", "-H", "grpc-timeout: 300m", "--data-binary", "@/tmp/wbody", "-D", "/dev/stderr", `https://${f.endpoint}/machined.v1.MachineService/Watch`, "-o", "/dev/null"] }).outputSync();
console.log(p.code, new TextDecoder().decode(p.stderr));
await f.close();
