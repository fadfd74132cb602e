/**
 * Where clients reach this node's API, for client configs issued over the API
 * (GenerateClientConfiguration with no endpoints): the node's own addresses,
 * as the kernel reports them (AddressStatus), with the port apid listens on.
 * Read at each call, so an address from DHCP that arrived after boot counts.
 */
import { parseIp } from "../../ip/mod.ts";
import type { AddressStatusSpec, MachineStore } from "../../resources/mod.ts";

/**
 * The API endpoints for `listen` (apid's `host:port`) given the node's
 * addresses. A wildcard listen (`0.0.0.0`: every IPv4 address; `::` or an
 * empty host: every address) yields each usable address of that family in
 * the order given (IPv4 first), skipping loopback, link-local and duplicates;
 * a specific host yields `listen` itself (apid answers nowhere else). Empty
 * when a wildcard listen finds no usable address. Pure.
 */
export function apiEndpoints(
  addresses: readonly Pick<AddressStatusSpec, "family" | "address" | "scope">[],
  listen: string,
): string[] {
  const { host, port } = splitHostPort(listen);
  const families = host === "0.0.0.0"
    ? ["inet"]
    : host === "::" || host === ""
    ? ["inet", "inet6"]
    : [];
  if (families.length === 0) return [host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const family of families) {
    for (const a of addresses) {
      if (a.family !== family || !usable(a) || seen.has(a.address)) continue;
      seen.add(a.address);
      out.push(family === "inet6" ? `[${a.address}]:${port}` : `${a.address}:${port}`);
    }
  }
  return out;
}

/**
 * {@link apiEndpoints} over the store's AddressStatus resources, or
 * `fallback()` when the node has no usable address (loopback, typically).
 */
export function nodeApiEndpoints(
  store: MachineStore,
  listen: string,
  fallback: () => readonly string[],
): readonly string[] {
  const addresses = store.list("AddressStatus").map((r) => r.spec);
  const found = apiEndpoints(addresses, listen);
  return found.length > 0 ? found : fallback();
}

/** Not loopback, not link-local (unreachable without a zone), not host-scoped. */
function usable(a: Pick<AddressStatusSpec, "address" | "scope">): boolean {
  if (a.scope === "host") return false;
  const ip = parseIp(a.address);
  if (!ip) return false;
  const [b0, b1] = ip.bytes;
  if (ip.family === 4) return b0 !== 127 && !(b0 === 169 && b1 === 254) && b0 !== 0;
  const loopback = ip.bytes.every((b, i) => b === (i === 15 ? 1 : 0));
  const unspecified = ip.bytes.every((b) => b === 0);
  const linkLocal = b0 === 0xfe && (b1 & 0xc0) === 0x80;
  return !loopback && !unspecified && !linkLocal;
}

/**
 * `host:port` or `[v6]:port` → its parts.
 * @throws RangeError when `listen` is not host:port.
 */
function splitHostPort(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:\[\]]*)):(\d{1,5})$/.exec(listen);
  if (!m) throw new RangeError(`Listen address "${listen}" is not host:port`);
  return { host: m[1] ?? m[2], port: Number(m[3]) };
}
