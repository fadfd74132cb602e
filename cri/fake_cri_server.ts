/**
 * A CRI RuntimeService server on a Unix socket, for tests: it speaks the same
 * gRPC subset as containerd, and a test sets the conditions it reports, makes
 * it fail, or makes it hang so the client's deadline is exercised.
 */
import http2 from "node:http2";
import type { Http2Session } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { RuntimeService } from "./gen/runtime/v1/api_pb.ts";
import type { CriCondition, CriVersion } from "./cri_client.ts";

/** A running fake; `close()` it. */
export interface FakeCriServer {
  readonly socket: string;
  /** Conditions the next Status reports. */
  conditions: CriCondition[];
  version: CriVersion;
  /** When set, every call fails with this gRPC code. */
  failWith?: Code;
  /** When true, calls never answer (until the client's deadline). */
  hang: boolean;
  /** Calls served so far, by method. */
  readonly calls: { Version: number; Status: number };
  close(): Promise<void>;
}

/** The conditions of a healthy runtime. */
export function readyConditions(): CriCondition[] {
  return [
    { type: "RuntimeReady", status: true, reason: "", message: "" },
    { type: "NetworkReady", status: true, reason: "", message: "" },
  ];
}

/** Starts a fake CRI server listening on `socket`. */
export async function startFakeCriServer(socket: string): Promise<FakeCriServer> {
  const hangs = new Set<() => void>();
  const fake: FakeCriServer = {
    socket,
    conditions: readyConditions(),
    version: { runtimeName: "fake", runtimeVersion: "0.0.1", runtimeApiVersion: "v1" },
    hang: false,
    calls: { Version: 0, Status: 0 },
    close: () => Promise.resolve(),
  };
  const gate = async (signal: AbortSignal) => {
    if (fake.failWith !== undefined) throw new ConnectError("injected failure", fake.failWith);
    if (fake.hang) {
      await new Promise<void>((resolve) => {
        const done = () => {
          hangs.delete(done);
          resolve();
        };
        hangs.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
      throw new ConnectError("hung call released", Code.Unavailable);
    }
  };
  const handler = connectNodeAdapter({
    grpc: true,
    connect: false,
    grpcWeb: false,
    routes: (router) =>
      router.service(RuntimeService, {
        async version(_req, ctx) {
          fake.calls.Version++;
          await gate(ctx.signal);
          return { version: "0.1.0", ...fake.version };
        },
        async status(_req, ctx) {
          fake.calls.Status++;
          await gate(ctx.signal);
          return { status: { conditions: fake.conditions }, info: {} };
        },
      }),
  });
  const sessions = new Set<Http2Session>();
  const server = http2.createServer({}, handler);
  server.on("session", (s: Http2Session) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
    s.on("error", () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => {
      server.off("error", reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  fake.close = () => {
    closing ??= (async () => {
      for (const release of [...hangs]) release();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.destroy();
      await closed;
      await Deno.remove(socket).catch(() => {});
    })();
    return closing;
  };
  return fake;
}
