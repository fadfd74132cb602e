/**
 * The DHCPv6 client state machine for one link, stateful IA_NA only (RFC 8415
 * §18): SOLICIT → ADVERTISE (the highest preference wins) → REQUEST → REPLY,
 * RENEW to the server at T1, REBIND to any server at T2, expiry at the valid
 * lifetime, and RELEASE. Like the DHCPv4 client it is driven by its caller:
 * each {@link Dhcp6Client.step} does what is due now and returns the ms until
 * more is due, so every timer (including RFC 8415 §15 retransmission with its
 * randomised doubling, capped at MRT) runs on the caller's monotonic clock;
 * waiting for one reply is bounded in real time. A REQUEST is given up after
 * REQ_MAX_RC sends (back to SOLICIT), a RENEW at T2, a REBIND at expiry. A
 * REPLY refusing the address (NoAddrsAvail and kin) is followed by a pause
 * before the next SOLICIT, doubling with each refusal in a row.
 * @module
 */
import type { Clock } from "../../runtime/mod.ts";
import type { DhcpSocket } from "../../platform/network/mod.ts";
import {
  decodeDhcp6,
  DHCP6_OPT,
  DHCP6_TYPE,
  type Dhcp6Message,
  encodeDhcp6,
} from "./dhcp6_packet.ts";
import {
  type Lease6,
  leaseFromReply,
  REB,
  refusalPause,
  REN,
  REQ,
  retransmitAfter,
  sameBytes,
  SOL,
} from "./dhcp6_lease.ts";

/** What the client is doing. */
export type Dhcp6ClientState = "soliciting" | "requesting" | "bound" | "renewing" | "rebinding";

/** Dependencies and tunables. */
export interface Dhcp6ClientOptions {
  link: string;
  /** This node's DUID (stable across boots). */
  duid: Uint8Array;
  /** Identity association id, stable per link. */
  iaid: number;
  openSocket: () => DhcpSocket;
  /** Real-time bound on waiting for replies to one send. @default 1000 */
  replyTimeoutMs?: number;
  /** 24-bit transaction ids. @default crypto random */
  xid?: () => number;
  /** Uniform in [0, 1) for the ±10% retransmission jitter. @default Math.random */
  random?: () => number;
  onChange?: (what: "acquired" | "renewed" | "expired" | "refused", lease?: Lease6) => void;
}

const ALL_SERVERS = "ff02::1:2";
const MAX_WAIT = 2 ** 31 - 1;
/** Status codes (RFC 8415 §21.13). */
export const STATUS = { NO_ADDRS_AVAIL: 2, NO_BINDING: 3, NOT_ON_LINK: 4 } as const;

/** One link's DHCPv6 client. */
export class Dhcp6Client {
  #state: Dhcp6ClientState = "soliciting";
  #lease: Lease6 | undefined;
  #advert: Dhcp6Message | undefined;
  /** The current exchange: transaction id, start, sends so far and last retransmission timeout. */
  #tx: { id: number; start: number; sends: number; rt: number } | undefined;
  #socket: DhcpSocket | undefined;
  /** Refusals in a row, and no SOLICIT before this (monotonic ms). */
  #refusals = 0;
  #holdUntil = 0;
  readonly #o: Dhcp6ClientOptions;

  constructor(options: Dhcp6ClientOptions) {
    this.#o = options;
  }

  get state(): Dhcp6ClientState {
    return this.#state;
  }

  get lease(): Lease6 | undefined {
    return this.#lease;
  }

  /**
   * Do what is due at `clock.monotonic()`; returns the ms until the next step.
   * @throws SysError from the socket (e.g. ENETUNREACH while the link is down)
   */
  async step(clock: Clock, signal: AbortSignal): Promise<number> {
    for (let i = 0; i < 4 && !signal.aborted; i++) {
      const wait = await this.#advance(clock, signal);
      if (wait > 0) return Math.min(wait, MAX_WAIT);
    }
    return 1000;
  }

  /** RELEASE a held lease (one send, best effort) and forget it. */
  async release(): Promise<void> {
    const lease = this.#lease;
    this.#reset();
    if (!lease) return;
    try {
      await this.#send(this.#msg(DHCP6_TYPE.RELEASE, this.#newId(), 0, lease.serverId, lease, 0));
    } catch {
      // The link may be gone; the server expires the binding.
    }
  }

  close(): void {
    this.#socket?.close();
    this.#socket = undefined;
  }

  async #advance(clock: Clock, signal: AbortSignal): Promise<number> {
    const now = clock.monotonic();
    const lease = this.#lease;
    if (lease && now >= lease.expiresAt) {
      this.#reset();
      this.#o.onChange?.("expired", lease);
      return 0;
    }
    switch (this.#state) {
      case "soliciting":
        if (now < this.#holdUntil) return this.#holdUntil - now;
        return await this.#exchange(clock, signal, DHCP6_TYPE.SOLICIT, SOL);
      case "requesting":
        return await this.#exchange(clock, signal, DHCP6_TYPE.REQUEST, REQ);
      case "bound":
        if (now < lease!.renewAt) return lease!.renewAt - now;
        this.#state = "renewing";
        this.#tx = undefined;
        return 0;
      case "renewing":
        if (now >= lease!.rebindAt) {
          this.#state = "rebinding";
          this.#tx = undefined;
          return 0;
        }
        return await this.#exchange(clock, signal, DHCP6_TYPE.RENEW, REN, lease!.rebindAt);
      case "rebinding":
        return await this.#exchange(clock, signal, DHCP6_TYPE.REBIND, REB, lease!.expiresAt);
    }
  }

  /** One (re)transmission of the current exchange and its replies; `until` bounds it (MRD). */
  async #exchange(
    clock: Clock,
    signal: AbortSignal,
    type: number,
    p: { irt: number; mrt: number; mrc?: number },
    until = Number.POSITIVE_INFINITY,
  ): Promise<number> {
    const now = clock.monotonic();
    if (p.mrc !== undefined && this.#tx && this.#tx.sends >= p.mrc) {
      this.#reset(); // REQ_MAX_RC: the server went quiet, start over
      return 0;
    }
    const tx = this.#tx ??= { id: this.#newId(), start: now, sends: 0, rt: 0 };
    tx.rt = retransmitAfter(tx.rt, tx.sends, p, type === DHCP6_TYPE.SOLICIT, () => this.#rand());
    tx.sends++;
    const elapsed = Math.round((now - tx.start) / 10);
    const lease = this.#lease;
    const server = type === DHCP6_TYPE.REQUEST
      ? this.#advert?.serverId
      : type === DHCP6_TYPE.RENEW
      ? lease?.serverId
      : undefined;
    const addr = type === DHCP6_TYPE.REQUEST ? this.#advert?.iaNa?.addresses[0] : lease;
    await this.#send(this.#msg(type, tx.id, elapsed, server, addr));
    const reply = await this.#reply(tx.id, type, signal);
    if (reply && this.#take(reply, clock)) return 0;
    return Math.max(1, Math.min(tx.rt, until - clock.monotonic()));
  }

  /** Act on a valid reply; true when the exchange is over. */
  #take(m: Dhcp6Message, clock: Clock): boolean {
    const code = m.status?.code ?? m.iaNa?.status?.code ?? 0;
    if (this.#state === "soliciting") {
      this.#advert = m;
      this.#state = "requesting";
      this.#tx = undefined;
      return true;
    }
    if (code === STATUS.NO_BINDING && this.#state !== "requesting") {
      this.#state = "requesting"; // RFC 8415 §18.2.10.1: re-request the same address
      const l = this.#lease!;
      this.#advert = {
        ...m,
        serverId: l.serverId,
        iaNa: { iaid: this.#o.iaid, t1: 0, t2: 0, addresses: [{ ...l, preferred: 0, valid: 0 }] },
      };
      this.#tx = undefined;
      return true;
    }
    const a = m.iaNa?.addresses[0];
    if (code !== 0 || !a || a.valid === 0) {
      const lost = this.#lease;
      this.#reset();
      this.#holdUntil = clock.monotonic() + refusalPause(this.#refusals++, () => this.#rand());
      this.#o.onChange?.("refused", lost);
      return true;
    }
    const now = clock.monotonic();
    const what = this.#lease ? "renewed" : "acquired";
    this.#lease = leaseFromReply(m, now, clock.now() - now);
    this.#state = "bound";
    this.#refusals = 0;
    this.#tx = undefined;
    this.#advert = undefined;
    this.#o.onChange?.(what, this.#lease);
    return true;
  }

  #reset(): void {
    this.#lease = undefined;
    this.#advert = undefined;
    this.#tx = undefined;
    this.#state = "soliciting";
  }

  #msg(
    type: number,
    id: number,
    elapsed: number,
    serverId?: Uint8Array,
    addr?: { address: string },
    lifetime?: number,
  ): Dhcp6Message {
    return {
      type,
      transactionId: id,
      clientId: this.#o.duid,
      ...(serverId ? { serverId } : {}),
      elapsed,
      ...(type === DHCP6_TYPE.RELEASE
        ? {}
        : { oro: [DHCP6_OPT.DNS_SERVERS, DHCP6_OPT.DOMAIN_LIST] }),
      iaNa: {
        iaid: this.#o.iaid,
        t1: 0,
        t2: 0,
        addresses: addr
          ? [{ address: addr.address, preferred: lifetime ?? 0, valid: lifetime ?? 0 }]
          : [],
      },
      dnsServers: [],
    };
  }

  async #send(m: Dhcp6Message): Promise<void> {
    this.#socket ??= this.#o.openSocket();
    await this.#socket.send(encodeDhcp6(m), ALL_SERVERS, 547);
  }

  /** The reply to `id` that answers `sent`; for SOLICIT the best ADVERTISE within the timeout. */
  async #reply(id: number, sent: number, signal: AbortSignal): Promise<Dhcp6Message | undefined> {
    const socket = this.#socket!;
    const onAbort = () => this.close();
    signal.addEventListener("abort", onAbort, { once: true });
    let best: Dhcp6Message | undefined;
    try {
      const deadline = performance.now() + (this.#o.replyTimeoutMs ?? 1000);
      while (!signal.aborted) {
        const left = deadline - performance.now();
        const d = left > 0 ? await socket.receive(left) : undefined;
        if (!d) return best;
        const m = this.#valid(d.data, id, sent);
        if (!m) continue;
        if (sent !== DHCP6_TYPE.SOLICIT) return m;
        if (m.preference === 255) return m; // RFC 8415 §18.2.1: take it at once
        if (!best || (m.preference ?? 0) > (best.preference ?? 0)) best = m;
      }
      return best;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Decoded, ours, and the right kind; an ADVERTISE without an address is ignored (§18.2.1). */
  #valid(data: Uint8Array, id: number, sent: number): Dhcp6Message | undefined {
    let m: Dhcp6Message;
    try {
      m = decodeDhcp6(data);
    } catch {
      return undefined; // garbled or oversized: not ours
    }
    const want = sent === DHCP6_TYPE.SOLICIT ? DHCP6_TYPE.ADVERTISE : DHCP6_TYPE.REPLY;
    if (m.type !== want || m.transactionId !== id || !m.serverId) return undefined;
    if (!m.clientId || !sameBytes(m.clientId, this.#o.duid)) return undefined;
    if (m.iaNa && m.iaNa.iaid !== this.#o.iaid) return undefined;
    if (want === DHCP6_TYPE.ADVERTISE) {
      const code = m.status?.code ?? m.iaNa?.status?.code ?? 0;
      if (code !== 0 || !m.iaNa?.addresses.length) return undefined; // NoAddrsAvail and kin
    }
    return m;
  }

  #newId(): number {
    return (this.#o.xid ?? (() => crypto.getRandomValues(new Uint32Array(1))[0]))() & 0xffffff;
  }

  #rand(): number {
    return (this.#o.random ?? Math.random)();
  }
}
