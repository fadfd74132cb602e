/**
 * One port, three protocols: Connect, gRPC and gRPC-Web reach the same
 * handlers through apid over mutual TLS (curl and grpcurl cover the first two
 * from outside; this covers gRPC-Web and a Connect client too).
 */
import { equal } from "node:assert/strict";
import { createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { startApiFixture } from "../testing.ts";

Deno.test("Connect, gRPC and gRPC-Web all answer on apid's port", async () => {
  const f = await startApiFixture();
  const reader = f.pki.clients["os:reader"];
  const baseUrl = `https://${f.endpoint}`;
  const sessions: Http2SessionManager[] = [];
  const session = () => {
    const s = new Http2SessionManager(baseUrl, {}, {
      ca: f.pki.ca.certPem,
      cert: reader.certPem,
      key: reader.keyPem,
    });
    sessions.push(s);
    return s;
  };
  try {
    const transports: Record<string, Transport> = {
      connect: createConnectTransport({ baseUrl, httpVersion: "2", sessionManager: session() }),
      grpc: createGrpcTransport({ baseUrl, sessionManager: session() }),
      grpcWeb: createGrpcWebTransport({ baseUrl, httpVersion: "2", sessionManager: session() }),
    };
    for (const [name, transport] of Object.entries(transports)) {
      const client = createClient(MachineService, transport);
      const v = await client.version({}, { timeoutMs: 5000 });
      equal(v.denoVersion, Deno.version.deno, `${name}: Version`);
      const ms = await client.list({ type: "MachineStatus" }, { timeoutMs: 5000 });
      equal(ms.resources[0]?.metadata?.type, "MachineStatus", `${name}: List`);
    }
  } finally {
    for (const s of sessions) s.abort();
    await f.close();
  }
});
