/**
 * `machinectl upgrade --from URL`: the node fetches the bundle itself and
 * streams the response body into the same reader as a client stream (never
 * buffered whole). Only http and https; the signature, not the transport,
 * is what makes a bundle trusted, so plain http is allowed.
 */
import { UpgradeRefusedError } from "../api/server/mod.ts";

/**
 * The body of `url` as chunks.
 * @throws UpgradeRefusedError invalid-argument for another scheme,
 *   unavailable when the fetch fails or answers other than 2xx.
 */
export async function fetchBundle(
  url: string,
  fetcher: typeof fetch = fetch,
): Promise<AsyncIterable<Uint8Array>> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UpgradeRefusedError("invalid-argument", `--from ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UpgradeRefusedError("invalid-argument", `--from ${url}: only http and https URLs`);
  }
  let res: Response;
  try {
    res = await fetcher(parsed);
  } catch (e) {
    throw new UpgradeRefusedError("unavailable", `fetching ${url}: ${(e as Error).message}`);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new UpgradeRefusedError("unavailable", `fetching ${url}: HTTP ${res.status}`);
  }
  return res.body;
}
