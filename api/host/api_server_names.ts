/**
 * The names the API server certificate must carry, so that a client verifying
 * the server's name (machinectl does) can dial the node by any of them: the
 * hostname, `machine.api.cert_sans`, every address the node holds (from
 * AddressStatus; link-local ones are left out, a client cannot dial them
 * without a zone), and loopback. Pure functions; api/host/api_pki.ts re-issues the
 * certificate when the wanted set differs from the certificate's.
 *
 * @module
 */
import { formatIp, parseIp } from "../../ip/mod.ts";
import type { AddressStatusSpec } from "../../resources/mod.ts";
import {
  type ServerNames,
  serverSubjectAltNames,
  subjectAltNamesOf,
  type x509,
} from "../../pki/mod.ts";

/** The facts the wanted names come from. */
export interface ServerNameFacts {
  /** The node's hostname (the certificate's CN). */
  readonly hostname: string;
  /** `machine.api.cert_sans`: DNS names (wildcards allowed) and IP addresses. */
  readonly certSans: readonly string[];
  /** AddressStatus specs. */
  readonly addresses: readonly Pick<AddressStatusSpec, "address" | "scope">[];
}

/** Pure: the names the server certificate should carry, hostname first, without duplicates. */
export function wantedServerNames(facts: ServerNameFacts): ServerNames {
  const hostnames = [facts.hostname];
  const addresses: string[] = [];
  for (const san of facts.certSans) {
    const ip = parseIp(san);
    if (ip) addresses.push(formatIp(ip));
    else hostnames.push(san.toLowerCase());
  }
  for (const a of facts.addresses) {
    if (a.scope === "link") continue;
    const ip = parseIp(a.address.split("%")[0]);
    if (ip) addresses.push(formatIp(ip));
  }
  return {
    hostnames: unique(hostnames.filter((h) => h.length > 0)),
    addresses: unique(addresses).sort(),
  };
}

/** Pure: the SAN set as sorted `dns:` / `ip:` strings, for comparison and events. */
export function sanList(names: ServerNames): string[] {
  return serverSubjectAltNames(names.hostnames, names.addresses)
    .map((n) => `${n.type}:${n.type === "ip" ? canonicalIp(n.value) : n.value}`)
    .sort();
}

/** The IP addresses of a {@link sanList} (its `ip:` entries, prefix dropped). Pure. */
export function sanListIps(sans: readonly string[]): string[] {
  return sans.filter((n) => n.startsWith("ip:")).map((n) => n.slice("ip:".length));
}

/** The SAN set a certificate carries, in {@link sanList}'s form. */
export function certificateSanList(cert: x509.X509Certificate): string[] {
  const { dns, ip } = subjectAltNamesOf(cert);
  return [
    ...dns.map((d) => `dns:${d.toLowerCase()}`),
    ...ip.map((a) => `ip:${canonicalIp(a)}`),
  ].sort();
}

/** True when the certificate names exactly `names` (plus loopback), no more, no less. */
export function certificateNamesExactly(cert: x509.X509Certificate, names: ServerNames): boolean {
  const have = certificateSanList(cert);
  const want = sanList(names);
  return have.length === want.length && have.every((n, i) => n === want[i]);
}

/** An IP literal in one text form (lower case, `::` compressed); other text lower-cased. Pure. */
export function canonicalIp(text: string): string {
  const ip = parseIp(text);
  return ip ? formatIp(ip) : text.toLowerCase();
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
