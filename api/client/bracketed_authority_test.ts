import assert from "node:assert/strict";
import http2 from "node:http2";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { BracketedAuthoritySessionManager } from "./create_machine_client.ts";

/** The `:authority` a server on ::1 receives from a session manager's request. */
async function authoritySeen(
  Manager: typeof Http2SessionManager,
): Promise<string | undefined> {
  const server = http2.createServer();
  const seen = new Promise<string | undefined>((resolve) =>
    server.on("stream", (stream, headers) => {
      resolve(headers[":authority"] as string | undefined);
      stream.respond({ ":status": 200 });
      stream.end();
    })
  );
  await new Promise<void>((ok) => server.listen(0, "::1", ok));
  const port = (server.address() as { port: number }).port;
  const manager = new Manager(`http://[::1]:${port}`);
  try {
    const stream = await manager.request("POST", "/x", {}, {});
    stream.resume();
    stream.end();
    await new Promise((ok) => stream.on("close", ok));
    return await seen;
  } finally {
    manager.abort();
    await new Promise((ok) => server.close(ok));
  }
}

Deno.test("an IPv6 literal's :authority is sent with its brackets (the edge resets it otherwise)", async () => {
  const port = /:(\d+)$/;
  const plain = await authoritySeen(Http2SessionManager);
  assert.match(
    plain ?? "",
    /^::1:\d+$/,
    "Deno's client drops the brackets (if fixed upstream, drop the workaround)",
  );
  const fixed = await authoritySeen(BracketedAuthoritySessionManager);
  assert.match(fixed ?? "", /^\[::1\]:\d+$/);
  assert.ok(port.test(fixed ?? ""));
});
