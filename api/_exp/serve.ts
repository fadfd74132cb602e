import { startApiFixture } from "../testing.ts";
const f = await startApiFixture();
console.log(JSON.stringify({ port: f.apid.port, dir: f.pki.dir }));
await new Promise((r) => setTimeout(r, 60000));
await f.close();
