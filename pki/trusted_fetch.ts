/**
 * A `fetch` for machined's own HTTPS clients (config URLs, `upgrade --from`) that trusts the
 * node's CA bundle as it is at the time of each request: the bundle is read per request and a
 * TLS client made from it, so a root added by config is trusted by the next request without a
 * restart. Without a bundle file (dev mode before it is written, a fresh boot fetching its
 * first config) the runtime's default roots are used. The client lives as long as the response
 * body and is closed when the body ends, fails or is cancelled.
 *
 * @module
 */

/** The bundle is refused past this (the system bundle plus 64 roots is well under it). */
export const MAX_TRUST_BUNDLE_BYTES = 8 * 1024 * 1024;

/** Options of {@link createTrustedFetch}. */
export interface TrustedFetchOptions {
  /** The CA bundle, PEM (trust.TrustedRootsController writes it). */
  readonly bundlePath: string;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** The error a trusted fetch throws when the bundle cannot be used. */
export class TrustBundleError extends Error {
  override readonly name = "TrustBundleError";
  constructor(readonly path: string, reason: string, options?: ErrorOptions) {
    super(`cannot use the CA bundle ${path}: ${reason}`, options);
  }
}

/**
 * A fetch that trusts the bundle at `bundlePath`, read per request.
 * @throws TrustBundleError when the bundle exists but cannot be read or used
 */
export function createTrustedFetch(options: TrustedFetchOptions): typeof fetch {
  const base = options.fetch ?? globalThis.fetch;
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const pem = await readBundle(options.bundlePath);
    if (pem === undefined) return await base(input, init);
    let client: Deno.HttpClient;
    try {
      client = Deno.createHttpClient({ caCerts: [pem] });
    } catch (e) {
      throw new TrustBundleError(options.bundlePath, (e as Error).message, { cause: e });
    }
    let res: Response;
    try {
      res = await base(input, { ...init, client } as RequestInit);
    } catch (e) {
      client.close();
      throw e;
    }
    if (!res.body) {
      client.close();
      return res;
    }
    return new Response(closingBody(res.body, client), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

async function readBundle(path: string): Promise<string | undefined> {
  try {
    const info = await Deno.stat(path);
    if (info.size > MAX_TRUST_BUNDLE_BYTES) {
      throw new TrustBundleError(path, `${info.size} bytes is more than ${MAX_TRUST_BUNDLE_BYTES}`);
    }
    const text = await Deno.readTextFile(path);
    return text.includes("-----BEGIN CERTIFICATE-----") ? text : undefined;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (e instanceof TrustBundleError) throw e;
    throw new TrustBundleError(path, (e as Error).message, { cause: e });
  }
}

/** `body` passed through; `client` closed once it ends, fails or is cancelled. */
function closingBody(
  body: ReadableStream<Uint8Array>,
  client: Deno.HttpClient,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let closed = false;
  const close = () => {
    if (!closed) {
      closed = true;
      client.close();
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          close();
          ctl.close();
        } else ctl.enqueue(value);
      } catch (e) {
        close();
        ctl.error(e);
      }
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason);
      } finally {
        close();
      }
    },
  });
}

/**
 * A failed fetch's message with its causes: Deno's own says only "fetch failed" and keeps the
 * reason (`invalid peer certificate: UnknownIssuer`) in `cause`, which an operator needs to see.
 */
export function fetchErrorText(e: unknown): string {
  const parts: string[] = [];
  for (let c: unknown = e; c !== undefined && parts.length < 4; c = (c as Error).cause) {
    parts.push(c instanceof Error ? c.message : String(c));
    if (!(c instanceof Error)) break;
  }
  return parts.join(": ");
}
