/**
 * The API server's certificate: signed by the node CA, valid for every name a
 * client may dial (hostname, each address, and loopback), serverAuth only.
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";
import type { CertificateAuthority, KeyedCertificate } from "./keyed_certificate.ts";
import { issueLeafCertificate } from "./leaf_certificate.ts";

/** Names every server certificate carries so local tools can always connect. */
export const LOOPBACK_NAMES = { hostnames: ["localhost"], addresses: ["127.0.0.1", "::1"] };

/** Parameters of {@link issueServerCertificate}. */
export interface ServerCertificateParams {
  /** The node CA. */
  ca: CertificateAuthority;
  /** DNS names of the node (its hostname, FQDN, ...). The first is the CN. */
  hostnames: readonly string[];
  /** IPv4 and IPv6 addresses of the node, without prefix length. */
  addresses: readonly string[];
  /** Issue time. @default new Date() */
  now?: Date;
  /** Lifetime in ms. @default LEAF_LIFETIME_MS (1 year) */
  lifetimeMs?: number;
}

/** Issue a server certificate (ExtendedKeyUsage serverAuth) for the node. */
export async function issueServerCertificate(
  params: ServerCertificateParams,
): Promise<KeyedCertificate> {
  const sans = serverSubjectAltNames(params.hostnames, params.addresses);
  const commonName = params.hostnames.find((h) => h.length > 0) ?? "localhost";
  return await issueLeafCertificate({
    ca: params.ca,
    subject: [{ O: ["machined"] }, { CN: [commonName] }],
    extendedKeyUsages: [x509.ExtendedKeyUsage.serverAuth],
    subjectAltNames: sans,
    now: params.now,
    lifetimeMs: params.lifetimeMs,
  });
}

/**
 * SAN entries for a node: its names and loopback as DNS, its addresses and
 * loopback as IP, without duplicates. Pure.
 * @throws {RangeError} when an address is not an IPv4/IPv6 literal
 */
export function serverSubjectAltNames(
  hostnames: readonly string[],
  addresses: readonly string[],
): x509.JsonGeneralNames {
  const dns = unique([...hostnames, ...LOOPBACK_NAMES.hostnames].map((h) => h.toLowerCase()));
  const ips = unique([...addresses, ...LOOPBACK_NAMES.addresses].map(normalizeAddress));
  return [
    ...dns.filter((h) => h.length > 0).map((value) => ({ type: "dns" as const, value })),
    ...ips.map((value) => ({ type: "ip" as const, value })),
  ];
}

/** The DNS names and IP addresses a certificate's SAN extension lists. */
export function subjectAltNamesOf(
  cert: x509.X509Certificate,
): { dns: string[]; ip: string[] } {
  const ext = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const items = ext?.names.items ?? [];
  return {
    dns: items.filter((n) => n.type === "dns").map((n) => n.value),
    ip: items.filter((n) => n.type === "ip").map((n) => n.value),
  };
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

function normalizeAddress(address: string): string {
  const bare = address.replace(/^\[|\]$/g, "").split("%")[0];
  if (IPV4.test(bare)) return bare;
  if (bare.includes(":") && /^[0-9a-fA-F:.]+$/.test(bare)) return bare.toLowerCase();
  throw new RangeError(`Cannot put "${address}" in a certificate: not an IPv4 or IPv6 address`);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
