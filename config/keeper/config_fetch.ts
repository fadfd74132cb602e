/**
 * Fetching a machine config from `machined.config=http(s)://…`: retried with
 * capped exponential backoff (the network may be up before the server is),
 * bounded in size, and checked against the sha256 pin when there is one. A
 * pin mismatch is retried too (the server may be mid-update) but reported
 * every time.
 *
 * @module
 */
import { fetchErrorText } from "../../pki/mod.ts";

/** The config text is refused beyond this (the config loader's own cap is the same order). */
export const MAX_FETCHED_CONFIG_BYTES = 1024 * 1024;

/** A fetch attempt that failed, and why. */
export class ConfigFetchError extends Error {
  override readonly name = "ConfigFetchError";
  constructor(readonly url: string, readonly reason: string) {
    super(`cannot fetch the config from ${url}: ${reason}`);
  }
}

/** Options of {@link fetchConfig}. */
export interface FetchConfigOptions {
  readonly sha256?: string;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** @default setTimeout-based */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Attempts before giving up; Infinity retries until `signal` aborts. @default Infinity */
  readonly attempts?: number;
  /** First delay, doubled up to {@link maxDelayMs}. @default 1000 */
  readonly initialDelayMs?: number;
  /** @default 30000 */
  readonly maxDelayMs?: number;
  /** Per attempt. @default 15000 */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Called after each failed attempt (logging). */
  readonly onError?: (error: ConfigFetchError, attempt: number) => void;
}

/** Lowercase hex SHA-256 of `bytes`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** One attempt. @throws ConfigFetchError */
export async function fetchConfigOnce(url: string, o: FetchConfigOptions = {}): Promise<string> {
  const doFetch = o.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(url, {
      signal: AbortSignal.any([
        AbortSignal.timeout(o.timeoutMs ?? 15_000),
        ...(o.signal ? [o.signal] : []),
      ]),
      redirect: "follow",
    });
  } catch (e) {
    throw new ConfigFetchError(url, fetchErrorText(e));
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new ConfigFetchError(url, `HTTP ${res.status}`);
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length > MAX_FETCHED_CONFIG_BYTES) {
    throw new ConfigFetchError(url, `${bytes.length} bytes is over ${MAX_FETCHED_CONFIG_BYTES}`);
  }
  if (o.sha256 !== undefined) {
    const got = await sha256Hex(bytes);
    if (got !== o.sha256.toLowerCase()) {
      throw new ConfigFetchError(url, `sha256 ${got} does not match the pinned ${o.sha256}`);
    }
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
}

/**
 * Fetches until an attempt succeeds (or attempts run out, or `signal` aborts).
 * @throws ConfigFetchError the last failure, when attempts run out
 * @throws DOMException AbortError when `signal` aborts
 */
export async function fetchConfig(url: string, o: FetchConfigOptions = {}): Promise<string> {
  const sleep = o.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  const attempts = o.attempts ?? Infinity;
  let delay = o.initialDelayMs ?? 1000;
  for (let attempt = 1;; attempt++) {
    o.signal?.throwIfAborted();
    try {
      return await fetchConfigOnce(url, o);
    } catch (e) {
      o.signal?.throwIfAborted();
      const err = e instanceof ConfigFetchError ? e : new ConfigFetchError(url, String(e));
      o.onError?.(err, attempt);
      if (attempt >= attempts) throw err;
    }
    await sleep(delay);
    delay = Math.min(delay * 2, o.maxDelayMs ?? 30_000);
  }
}
