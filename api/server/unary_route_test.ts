/**
 * Get and List on machined's internal socket through the direct unary route
 * (unary_route.ts): the same answers as the Connect handler gives (asked in
 * gRPC with the JSON codec, which the route leaves to Connect), the same
 * error codes, the same metrics, and everything it does not take still
 * answered by Connect.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  create,
  type DescMessage,
  fromBinary,
  fromJsonString,
  type MessageInitShape,
  type MessageShape,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import {
  GetRequestSchema,
  GetResponseSchema,
  ListRequestSchema,
  ListResponseSchema,
  MachineService,
} from "../gen/machined/v1/machine_pb.ts";
import { EventBus } from "../../events/mod.ts";
import { MetricsRegistry } from "../../metrics/mod.ts";
import { createTestPki, RecordingActions, seededStore } from "../testing.ts";
import { createClientConfigIssuer } from "./client_config_issuer.ts";
import { startInternalApiServer } from "./internal_server.ts";
import { connectH2, frame, type H2Client, READER } from "./testing_h2.ts";
import { createUnaryRoute } from "./unary_route.ts";
import { createMachineService } from "./machine_service.ts";
import { identityToHeaders } from "../auth/mod.ts";

const GET = `/${MachineService.typeName}/Get`;
const LIST = `/${MachineService.typeName}/List`;

async function withServer(
  run: (f: { socketPath: string; registry: MetricsRegistry }) => Promise<void>,
): Promise<void> {
  const pki = await createTestPki();
  const registry = new MetricsRegistry();
  const socketPath = join(pki.dir, "run", "api.sock");
  const server = await startInternalApiServer({
    socketPath,
    registry,
    deps: {
      store: seededStore(),
      actions: new RecordingActions(),
      events: new EventBus(),
      clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
    },
  });
  try {
    await run({ socketPath, registry });
  } finally {
    await server.close();
    await Deno.remove(pki.dir, { recursive: true });
  }
}

/** One call in binary gRPC (the route's): the trailers and the decoded answer, if any. */
async function callBinary<I extends DescMessage, O extends DescMessage>(
  c: H2Client,
  path: string,
  input: I,
  output: O,
  req: MessageInitShape<I>,
  body: Uint8Array = toBinary(input, create(input, req)),
) {
  const got: MessageShape<O>[] = [];
  const call = c.call(path, body, (b) => got.push(fromBinary(output, b)));
  return { trailers: await call.done, answer: got[0] };
}

/** The same call in gRPC with the JSON codec, which only Connect serves. */
async function callJson<I extends DescMessage, O extends DescMessage>(
  c: H2Client,
  path: string,
  input: I,
  output: O,
  req: MessageInitShape<I>,
) {
  const got: MessageShape<O>[] = [];
  const body = new TextEncoder().encode(toJsonString(input, create(input, req)));
  const call = c.call(
    path,
    body,
    (b) => got.push(fromJsonString(output, new TextDecoder().decode(b))),
    { "content-type": "application/grpc+json" },
  );
  return { trailers: await call.done, answer: got[0] };
}

Deno.test("Get and List through the direct route answer exactly what the Connect handler answers", async () => {
  await withServer(async ({ socketPath }) => {
    const c = connectH2(socketPath);
    try {
      for (
        const req of [{ type: "ms", id: "machine" }, {
          type: "controllers",
          namespace: "runtime",
          id: "time.SyncController",
        }]
      ) {
        const direct = await callBinary(c, GET, GetRequestSchema, GetResponseSchema, req);
        const viaConnect = await callJson(c, GET, GetRequestSchema, GetResponseSchema, req);
        equal(direct.trailers["grpc-status"], "0");
        equal(viaConnect.trailers["grpc-status"], "0");
        ok(direct.answer.resource, "a resource");
        deepEqual(direct.answer, viaConnect.answer);
      }
      for (const req of [{ type: "controllers" }, { type: "controllers", namespace: "*" }]) {
        const direct = await callBinary(c, LIST, ListRequestSchema, ListResponseSchema, req);
        const viaConnect = await callJson(c, LIST, ListRequestSchema, ListResponseSchema, req);
        ok(direct.answer.resources.length > 0);
        deepEqual(direct.answer, viaConnect.answer);
      }
    } finally {
      c.close();
    }
  });
});

Deno.test("direct Get errors carry the Connect handler's codes and messages", async () => {
  await withServer(async ({ socketPath }) => {
    const c = connectH2(socketPath);
    try {
      const cases: [Record<string, string>, string, RegExp][] = [
        [{ type: "ms", id: "" }, "3", /Get needs an id/],
        [{ type: "nosuchtype", id: "x" }, "3", /Unknown resource type "nosuchtype"/],
        [{ type: "ms", id: "nosuchid" }, "5", /nosuchid/],
      ];
      for (const [req, code, message] of cases) {
        const direct = await callBinary(c, GET, GetRequestSchema, GetResponseSchema, req);
        const viaConnect = await callJson(c, GET, GetRequestSchema, GetResponseSchema, req);
        equal(direct.trailers["grpc-status"], code, JSON.stringify(req));
        equal(viaConnect.trailers["grpc-status"], code);
        ok(message.test(decodeURIComponent(direct.trailers["grpc-message"] ?? "")));
        equal(direct.trailers["grpc-message"], viaConnect.trailers["grpc-message"]);
        equal(direct.answer, undefined);
      }
      const garbage = await callBinary(
        c,
        GET,
        GetRequestSchema,
        GetResponseSchema,
        {},
        new Uint8Array([0xff, 0xff, 0xff]),
      );
      equal(garbage.trailers["grpc-status"], "3", "an undecodable body is InvalidArgument");
      const body = toBinary(
        GetRequestSchema,
        create(GetRequestSchema, { type: "ms", id: "machine" }),
      );
      for (const ct of ["application/grpc", "application/grpc+json"]) {
        const json = ct.endsWith("json");
        const call = c.call(
          GET,
          json ? new TextEncoder().encode('{"type":"ms","id":"machine"}') : body,
          () => {},
          { "content-type": ct, "grpc-timeout": "soon" },
        );
        const t = await call.done;
        equal(t["grpc-status"], "3", `a malformed grpc-timeout (${ct})`);
        ok(/invalid grpc timeout value/.test(decodeURIComponent(t["grpc-message"] ?? "")));
      }
    } finally {
      c.close();
    }
  });
});

Deno.test("direct Gets are counted in machined_api_requests_total, by code, as Connect counts them", async () => {
  await withServer(async ({ socketPath, registry }) => {
    const c = connectH2(socketPath);
    try {
      await callBinary(c, GET, GetRequestSchema, GetResponseSchema, { type: "ms", id: "machine" });
      await callBinary(c, GET, GetRequestSchema, GetResponseSchema, { type: "ms", id: "nope" });
      await callJson(c, GET, GetRequestSchema, GetResponseSchema, { type: "ms", id: "machine" });
      const text = await registry.render();
      ok(text.includes('machined_api_requests_total{method="Get",code="OK"} 2'), text);
      ok(text.includes('machined_api_requests_total{method="Get",code="NotFound"} 1'), text);
      ok(/machined_api_request_duration_seconds_count\{method="Get"\} 2/.test(text), text);
    } finally {
      c.close();
    }
  });
});

Deno.test("a Get without forwarded identity, or from a maintenance caller, is left to the Connect handler, which refuses it", async () => {
  await withServer(async ({ socketPath }) => {
    const anonymous = connectH2(socketPath, null);
    const maintenance = connectH2(socketPath, {
      role: "os:admin",
      name: "maintenance",
      serialNumber: "",
      maintenance: true,
    });
    try {
      const req = { type: "ms", id: "machine" };
      const a = await callBinary(anonymous, GET, GetRequestSchema, GetResponseSchema, req);
      equal(a.trailers["grpc-status"], "16", "Unauthenticated");
      const m = await callBinary(maintenance, GET, GetRequestSchema, GetResponseSchema, req);
      equal(m.trailers["grpc-status"], "7", "PermissionDenied: not in maintenance mode");
    } finally {
      anonymous.close();
      maintenance.close();
    }
  });
});

Deno.test("the route takes Get and List in uncompressed gRPC from a forwarded identity, and nothing else", async () => {
  const pki = await createTestPki();
  const route = createUnaryRoute({
    impl: createMachineService({
      store: seededStore(),
      actions: new RecordingActions(),
      events: new EventBus(),
      clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
    }),
    readMaxBytes: 1 << 20,
    writeMaxBytes: 1 << 20,
  });
  const identity = new Headers();
  identityToHeaders(READER, identity);
  const body = toBinary(GetRequestSchema, create(GetRequestSchema, { type: "ms", id: "machine" }));
  const written: unknown[] = [];
  const fake = (url: string, headers: Record<string, string>, forwarded: boolean) => ({
    req: {
      method: "POST",
      url,
      headers: {
        "content-type": "application/grpc",
        ...(forwarded ? Object.fromEntries(identity) : {}),
        ...headers,
      },
      on: () => {},
      async *[Symbol.asyncIterator]() {
        yield frame(body);
      },
    },
    res: {
      closed: false,
      destroyed: false,
      writeHead: (_: number, h: Record<string, string>) => written.push(h),
      write: (b: Uint8Array) => written.push(b),
      addTrailers: (t: Record<string, string>) => written.push(t),
      end: () => written.push("end"),
    },
  });
  const take = (url: string, headers: Record<string, string> = {}, forwarded = true) => {
    const { req, res } = fake(url, headers, forwarded);
    return route(req as never, res as never);
  };
  equal(take(GET), true);
  await new Promise((r) => setTimeout(r, 50));
  deepEqual(written[0], { "content-type": "application/grpc+proto" });
  const answer = fromBinary(GetResponseSchema, (written[1] as Uint8Array).subarray(5));
  equal(answer.resource?.metadata?.id, "machine");
  deepEqual(written.slice(2), [{ "grpc-status": "0" }, "end"]);
  equal(take(LIST), true);
  equal(take(`/${MachineService.typeName}/Version`), false, "other methods go to Connect");
  equal(take(`/${MachineService.typeName}/Watch`), false);
  equal(take(GET, { "content-type": "application/grpc+json" }), false);
  equal(take(GET, { "content-type": "application/proto" }), false, "Connect protocol");
  equal(take(GET, { "content-type": "application/grpc-web+proto" }), false);
  equal(take(GET, { "grpc-encoding": "gzip" }), false);
  equal(take(GET, { "x-machined-maintenance": "1" }), false, "maintenance callers go to Connect");
  equal(take(GET, {}, false), false, "no forwarded identity: Connect refuses it");
  await Deno.remove(pki.dir, { recursive: true });
});
