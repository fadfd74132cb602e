/**
 * A DHCPv6 lease as the client holds it, the pure rule turning a REPLY into
 * one (T1/T2 defaults, infinite lifetimes), and the retransmission timing,
 * kept apart from the state
 * machine so both stay small and the rule is testable alone.
 * @module
 */
import type { Dhcp6Message } from "./dhcp6_packet.ts";

const INFINITE = 0xffffffff;

/** Retransmission parameters of one exchange, ms (RFC 8415 §7.6); `mrc` caps the sends. */
export interface Retransmit {
  irt: number;
  mrt: number;
  mrc?: number;
}
export const SOL: Retransmit = { irt: 1_000, mrt: 3_600_000 };
export const REQ: Retransmit = { irt: 1_000, mrt: 30_000, mrc: 10 };
export const REN: Retransmit = { irt: 10_000, mrt: 600_000 };
export const REB: Retransmit = { irt: 10_000, mrt: 600_000 };

/**
 * RFC 8415 §15: the first timeout is IRT ± 10% (the first SOLICIT's only
 * later, never earlier), each next one about doubles, capped at MRT ± 10%.
 */
export function retransmitAfter(
  prev: number,
  sends: number,
  p: Retransmit,
  firstSolicit: boolean,
  rand: () => number,
): number {
  const jitter = () => 0.2 * rand() - 0.1;
  if (sends === 0) return p.irt * (firstSolicit ? 1 + 0.1 * rand() : 1 + jitter());
  return Math.min(2 * prev + jitter() * prev, p.mrt * (1 + jitter()));
}

/**
 * The pause before soliciting again after the `n`th refusal in a row (0
 * first): SOL_TIMEOUT doubling up to SOL_MAX_RT, ±10%. Without it a server
 * that advertises an address and then refuses it would get a SOLICIT and a
 * REQUEST from every client several times a second (RFC 8415 asks clients
 * to rate-limit their messages, §14.1).
 */
export function refusalPause(n: number, rand: () => number): number {
  return Math.min(SOL.irt * 2 ** Math.min(n, 32), SOL.mrt) * (1 + 0.2 * rand() - 0.1);
}

/** A leased address; times are monotonic ms on the caller's clock. */
export interface Lease6 {
  address: string;
  /** Always 128 (RFC 8415 §21.6: the on-link prefix comes from router advertisements). */
  prefixLen: 128;
  /** The server's DUID, hex. */
  server: string;
  serverId: Uint8Array;
  dnsServers: string[];
  domains: string[];
  preferredSeconds: number;
  validSeconds: number;
  acquiredAt: number;
  renewAt: number;
  rebindAt: number;
  expiresAt: number;
  /** Epoch ms minus monotonic ms when bound: turns the times into wall time for display. */
  wallOffsetMs?: number;
}

/** Pure: the lease a REPLY grants at `now`; T1/T2 of 0 default to 0.5/0.8 of the preferred lifetime. */
export function leaseFromReply(m: Dhcp6Message, now: number, wallOffsetMs = 0): Lease6 {
  const a = m.iaNa!.addresses[0];
  const at = (s: number) => s === INFINITE ? Number.POSITIVE_INFINITY : now + 1000 * s;
  const pref = Math.min(a.preferred, a.valid);
  const t1 = m.iaNa!.t1 || Math.floor(pref * 0.5);
  const t2 = Math.max(m.iaNa!.t2 || Math.floor(pref * 0.8), t1);
  return {
    address: a.address,
    prefixLen: 128,
    server: hex(m.serverId!),
    serverId: m.serverId!,
    dnsServers: m.dnsServers,
    domains: m.domains ?? [],
    preferredSeconds: a.preferred,
    validSeconds: a.valid,
    acquiredAt: now,
    renewAt: Math.min(at(t1), at(a.valid)),
    rebindAt: Math.min(at(t2), at(a.valid)),
    expiresAt: at(a.valid),
    wallOffsetMs,
  };
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function hex(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join(":");
}
