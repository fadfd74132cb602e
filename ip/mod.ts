/**
 * IP addresses and CIDRs, parsed strictly and printed canonically: the one
 * parser for everything that reads an address from text (the machine config,
 * the API's listeners and probe, the network backends, the certificates'
 * subject alternative names). Pure, with no imports, so every room may use it.
 *
 * @example
 * ```ts
 * import { formatIp, parseIp } from "../ip/mod.ts";
 * const ip = parseIp("2001:db8:0:0:0:0:0:1"); // { family: 6, bytes: Uint8Array(16) }
 * formatIp(ip!); // "2001:db8::1"
 * ```
 *
 * @module
 */
export {
  type Cidr,
  formatCidr,
  formatIp,
  hasZeroHostBits,
  type IpAddress,
  networkOf,
  parseCidr,
  parseHostPort,
  parseIp,
  parseIpv4,
  parseIpv6,
} from "./ip.ts";
