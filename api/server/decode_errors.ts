/**
 * A body that does not decode is the caller's mistake: connect-es answers an
 * undecodable protobuf body with Internal ("parse binary: ...", before any
 * interceptor runs) while it answers malformed JSON with InvalidArgument. This
 * wraps the router's handlers so both are InvalidArgument, for Connect unary
 * (HTTP 400, `invalid_argument`), Connect streaming (the end-stream message),
 * gRPC (grpc-status 3) and gRPC-Web (its trailer frame) alike.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";

const PARSE_FAILURE = /^parse binary: /;

/** Re-wraps every handler registered on `router` so far. */
export function decodeFailuresAreInvalidArgument(router: ConnectRouter): void {
  const handlers = router.handlers as UniversalHandler[];
  for (let i = 0; i < handlers.length; i++) {
    const inner = handlers[i];
    handlers[i] = Object.assign(
      async (req: Parameters<UniversalHandler>[0]) => await remap(await inner(req)),
      inner,
    );
  }
}

async function remap(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  if (res.header && isGrpcParseFailure(res.header)) res.header.set("grpc-status", "3");
  const json = res.header?.get("content-type")?.startsWith("application/json");
  if (res.status === 500 && json && res.body) return await remapConnectUnary(res, res.body);
  const body = res.body;
  const type = res.header?.get("content-type") ?? "";
  if (body && /^application\/(connect|grpc-web)\+/.test(type)) {
    return { ...res, body: remapEnvelopes(body, type.includes("connect")) };
  }
  const trailer = res.trailer;
  if (!trailer || !body) return res;
  return {
    ...res,
    body: (async function* () {
      yield* body;
      if (isGrpcParseFailure(trailer)) trailer.set("grpc-status", "3");
    })(),
  };
}

function isGrpcParseFailure(h: Headers): boolean {
  const message = h.get("grpc-message");
  return h.get("grpc-status") === "13" && message !== null &&
    PARSE_FAILURE.test(decodeURIComponent(message));
}

/** A Connect unary error body is one small JSON object; read it, and rewrite a parse failure. */
async function remapConnectUnary(
  res: UniversalServerResponse,
  source: AsyncIterable<Uint8Array>,
): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const c of source) chunks.push(c);
  let bytes: Uint8Array = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  let status = res.status;
  try {
    const error = JSON.parse(new TextDecoder().decode(bytes)) as {
      code?: string;
      message?: string;
    };
    if (error.code === "internal" && PARSE_FAILURE.test(error.message ?? "")) {
      bytes = new TextEncoder().encode(JSON.stringify({ ...error, code: "invalid_argument" }));
      status = 400;
      res.header?.set("content-length", String(bytes.byteLength));
    }
  } catch {
    // Not an error object: pass it on unchanged.
  }
  const body = bytes;
  return {
    ...res,
    status,
    body: (async function* () {
      yield body;
    })(),
  };
}

/** Rewrites the end-stream envelope (Connect: JSON; gRPC-Web: trailer lines) of a parse failure. */
async function* remapEnvelopes(
  body: AsyncIterable<Uint8Array>,
  connect: boolean,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    const endFlag = connect ? 0x02 : 0x80;
    if (chunk.length < 5 || !(chunk[0] & endFlag)) {
      yield chunk;
      continue;
    }
    const text = new TextDecoder().decode(chunk.subarray(5));
    const fixed = connect ? remapConnectEnd(text) : remapGrpcWebTrailer(text);
    if (fixed === undefined) {
      yield chunk;
      continue;
    }
    const payload = new TextEncoder().encode(fixed);
    const out = new Uint8Array(5 + payload.length);
    out[0] = chunk[0];
    new DataView(out.buffer).setUint32(1, payload.length);
    out.set(payload, 5);
    yield out;
  }
}

function remapConnectEnd(text: string): string | undefined {
  try {
    const end = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (end.error?.code !== "internal" || !PARSE_FAILURE.test(end.error.message ?? "")) return;
    return JSON.stringify({ ...end, error: { ...end.error, code: "invalid_argument" } });
  } catch {
    return undefined;
  }
}

function remapGrpcWebTrailer(text: string): string | undefined {
  const headers = new Headers();
  for (const line of text.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0) headers.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  if (!isGrpcParseFailure(headers)) return undefined;
  return text.replace(/grpc-status:\s*13/i, "grpc-status: 3");
}
