import { equal, ok, rejects } from "node:assert/strict";
import { startSntpResponder } from "../../controllers/time/mod.ts";
import { createSntpTimeQuerier } from "./time_querier.ts";

Deno.test("time querier: measures the offset of an SNTP server on loopback", async () => {
  const server = await startSntpResponder({ offsetMs: 5000 });
  try {
    const s = await createSntpTimeQuerier({ port: server.port }).query("127.0.0.1");
    equal(s.address, "127.0.0.1");
    ok(Math.abs(s.offsetMs - 5000) < 200, `offset ${s.offsetMs}`);
    ok(s.delayMs >= 0);
  } finally {
    await server.close();
  }
});

Deno.test("time querier: a server that does not answer times out", async () => {
  const server = await startSntpResponder();
  const port = server.port;
  await server.close();
  await rejects(createSntpTimeQuerier({ timeoutMs: 200, port }).query("127.0.0.1"));
});
