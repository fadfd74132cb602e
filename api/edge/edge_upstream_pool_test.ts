/**
 * machined-edge hands its upstream connection to machined on from one client
 * connection to the next (native-ops/edge/src/upstream_pool.rs): Deno 2.9.3's
 * node:http2 server keeps ~25 KiB of every session it served, so a connection
 * per `machinectl` call or scrape was a leak in machined (docs/decisions.md,
 * "The edge hands its upstream connections on"). A connection whose client
 * left a call unfinished is not handed on: machined's send gate may still
 * count that call's unsent bytes against it.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { WatchRequestSchema } from "../gen/machined/v1/machine_pb.ts";
import { startApiFixture } from "../testing.ts";
import { WATCH_PATH } from "../server/mod.ts";
import { edgeBinaryBuilt, startEdgeServer } from "./testing.ts";

const built = edgeBinaryBuilt();
type Keyed = { certPem: string; keyPem: string };

/** One call on a connection of its own, closed before it returns. */
async function versionOnFreshConnection(port: number, caPem: string, cert: Keyed): Promise<void> {
  const client = Deno.createHttpClient({ caCerts: [caPem], cert: cert.certPem, key: cert.keyPem });
  try {
    const res = await fetch(`https://localhost:${port}/machined.v1.MachineService/Version`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      client,
    });
    equal(res.status, 200);
    await res.text();
  } finally {
    client.close();
  }
  await new Promise((r) => setTimeout(r, 100)); // the edge sees the close
}

/** `machined_edge_upstream_connections_total`, from a scrape on a fresh connection. */
async function upstreamConnections(port: number, caPem: string, cert: Keyed): Promise<number> {
  const client = Deno.createHttpClient({ caCerts: [caPem], cert: cert.certPem, key: cert.keyPem });
  try {
    const text = await (await fetch(`https://localhost:${port}/metrics`, { client })).text();
    const m = text.match(/\nmachined_edge_upstream_connections_total (\d+)\n/);
    ok(m, "the edge appends machined_edge_upstream_connections_total to /metrics");
    return Number(m[1]);
  } finally {
    client.close();
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test({
  name:
    "machined-edge: 20 calls on 20 client connections reach machined over one upstream connection (needs the edge binary)",
  ignore: !built,
}, async () => {
  const f = await startApiFixture();
  try {
    const reader = f.pki.clients["os:reader"];
    for (let i = 0; i < 20; i++) {
      await versionOnFreshConnection(f.apid.port, f.pki.ca.certPem, reader);
    }
    // Before the pool: one upstream connection per client connection (21 here).
    equal(await upstreamConnections(f.apid.port, f.pki.ca.certPem, reader), 1);
  } finally {
    await f.close();
  }
});

Deno.test({
  name:
    "machined-edge: a connection whose client left a stream unfinished is not handed on (needs the edge binary)",
  ignore: !built,
}, async () => {
  const f = await startApiFixture();
  const edge = await startEdgeServer({
    ca: f.pki.ca,
    server: f.pki.server,
    socketPath: f.socketPath,
    pkiDir: join(f.pki.dir, "pool-pki"),
    limits: { watchFanout: "machined" }, // the Watch goes upstream as it is
  });
  const reader = f.pki.clients["os:reader"];
  try {
    await versionOnFreshConnection(edge.port, f.pki.ca.certPem, reader);
    equal(await upstreamConnections(edge.port, f.pki.ca.certPem, reader), 1);
    // A Watch read once, then cancelled and its client connection closed.
    const msg = toBinary(WatchRequestSchema, create(WatchRequestSchema, { type: "controllers" }));
    const framed = new Uint8Array(5 + msg.length);
    new DataView(framed.buffer).setUint32(1, msg.length);
    framed.set(msg, 5);
    const client = Deno.createHttpClient({
      caCerts: [f.pki.ca.certPem],
      cert: reader.certPem,
      key: reader.keyPem,
    });
    const res = await fetch(`https://localhost:${edge.port}${WATCH_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/grpc", te: "trailers" },
      body: framed,
      client,
    });
    const reader_ = res.body!.getReader();
    ok(!(await reader_.read()).done, "the Watch answers");
    await reader_.cancel(); // the stream is reset with machined's reply unfinished
    client.close();
    await new Promise((r) => setTimeout(r, 200));
    // The Watch's connection is closed, not kept: the next call needs a new one.
    await versionOnFreshConnection(edge.port, f.pki.ca.certPem, reader);
    equal(await upstreamConnections(edge.port, f.pki.ca.certPem, reader), 2);
  } finally {
    await edge.close();
    await f.close();
  }
});
