/**
 * `machinectl upgrade --from URL`: the node fetches the bundle itself and
 * streams the response body into the same reader as a client stream (never
 * buffered whole). Only http and https; the signature, not the transport,
 * is what makes a bundle trusted, so plain http is allowed. The response
 * headers must come within {@link FETCH_HEADERS_MS}; the body is then bound
 * by the install's idle and overall deadlines (bundle/deadline.ts), and its
 * Content-Length, when sent, is checked against the manifest's sizes before
 * the ESP is opened for writing.
 */
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { UPGRADE_FETCH_HEADERS_MS } from "../bundle/mod.ts";
import { fetchErrorText } from "../pki/mod.ts";

/** Connect and response headers of a `--from` fetch must take no longer. */
export const FETCH_HEADERS_MS = UPGRADE_FETCH_HEADERS_MS;

/** A fetched bundle: its body, the size the server announced, and a way to drop it. */
export interface FetchedBundle {
  body: AsyncIterable<Uint8Array>;
  /** Content-Length, when the server sent one. */
  size?: number;
  /** Abort the fetch (a stalled body read then ends). Safe after the body was read. */
  abort(): void;
}

/**
 * The body of `url` as chunks.
 * @throws UpgradeRefusedError invalid-argument for another scheme,
 *   deadline-exceeded when no response headers came in time, unavailable
 *   when the fetch fails or answers other than 2xx.
 */
export async function fetchBundle(
  url: string,
  fetcher: typeof fetch = fetch,
  headersMs = FETCH_HEADERS_MS,
): Promise<FetchedBundle> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UpgradeRefusedError("invalid-argument", `--from ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UpgradeRefusedError("invalid-argument", `--from ${url}: only http and https URLs`);
  }
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, headersMs);
  let res: Response;
  try {
    res = await fetcher(parsed, { signal: ctl.signal });
  } catch (e) {
    if (timedOut) {
      throw new UpgradeRefusedError(
        "deadline-exceeded",
        `fetching ${url}: no response headers within ${headersMs / 1000} s`,
      );
    }
    throw new UpgradeRefusedError("unavailable", `fetching ${url}: ${fetchErrorText(e)}`);
  } finally {
    clearTimeout(timer);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new UpgradeRefusedError("unavailable", `fetching ${url}: HTTP ${res.status}`);
  }
  const length = res.headers.get("content-length");
  const size = length !== null && /^\d+$/.test(length) ? Number(length) : undefined;
  return { body: res.body, size, abort: () => ctl.abort() };
}
