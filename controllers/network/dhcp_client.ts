/**
 * The DHCPv4 client state machine for one link (RFC 2131 §4.4): DISCOVER →
 * OFFER → REQUEST → ACK, renewal at T1 by unicast to the server, rebinding at
 * T2 by broadcast, expiry, and RELEASE. It is driven by its controller: each
 * {@link DhcpClient.step} does the work that is due now and returns how long
 * until more is due, so every timer runs on the controller's clock (a fake one
 * in tests). Waiting for a server's reply is bounded in real time.
 * @module
 */
import type { Clock } from "../../runtime/mod.ts";
import type { DhcpSocket } from "../../platform/network/mod.ts";
import {
  classfulPrefix,
  decodeDhcp,
  type DhcpMessage,
  type DhcpMessageType,
  encodeDhcp,
  maskToPrefix,
  OPT,
} from "./dhcp_packet.ts";

/** What the client is doing. */
export type DhcpClientState =
  | "init"
  | "selecting"
  | "requesting"
  | "bound"
  | "renewing"
  | "rebinding";

/** An acknowledged lease; times are monotonic ms on the controller's clock (`clock.monotonic()`). */
export interface Lease {
  address: string;
  prefixLen: number;
  server: string;
  routers: string[];
  dnsServers: string[];
  domain?: string;
  hostname?: string;
  leaseSeconds: number;
  acquiredAt: number;
  renewAt: number;
  rebindAt: number;
  expiresAt: number;
  /** Epoch ms minus monotonic ms when the lease was bound: turns its times into wall time for display. */
  wallOffsetMs?: number;
}

/** Dependencies and tunables. */
export interface DhcpClientOptions {
  link: string;
  mac: string;
  /** Opens the link's client socket (again after an abort closed it). */
  openSocket: () => DhcpSocket;
  /** Real-time bound on waiting for one reply. @default 3000 */
  replyTimeoutMs?: number;
  /** New transaction ids. @default crypto random */
  xid?: () => number;
  /** Told about lease changes (acquired, renewed, lost). */
  onChange?: (what: "acquired" | "renewed" | "expired" | "nak", lease?: Lease) => void;
}

/** Parameters asked for in every request (option 55). */
const PARAMETERS = [
  OPT.SUBNET_MASK,
  OPT.ROUTER,
  OPT.DNS_SERVERS,
  OPT.HOSTNAME,
  OPT.DOMAIN_NAME,
  OPT.LEASE_TIME,
  OPT.SERVER_ID,
  OPT.RENEWAL_TIME,
  OPT.REBINDING_TIME,
];
const INFINITE = 0xffffffff;
/** Longest single wait handed back (setTimeout's limit is 2^31-1 ms). */
const MAX_WAIT = 2 ** 31 - 1;
/** RFC 2131 §4.4.5: retransmit renew/rebind no more often than this. */
const MIN_RENEW_RETRY = 60_000;

/** One link's DHCPv4 client. */
export class DhcpClient {
  #state: DhcpClientState = "init";
  #lease: Lease | undefined;
  #offer: DhcpMessage | undefined;
  #attempts = 0;
  #socket: DhcpSocket | undefined;
  readonly #o: DhcpClientOptions;

  constructor(options: DhcpClientOptions) {
    this.#o = options;
  }

  get state(): DhcpClientState {
    return this.#state;
  }

  /** The current lease while bound, renewing or rebinding. */
  get lease(): Lease | undefined {
    return this.#lease;
  }

  /**
   * Do what is due at `clock.monotonic()` and return the ms until the next step is due.
   * An aborted `signal` closes the socket and ends a pending wait.
   * @throws SysError from the socket (e.g. ENETUNREACH while the link is down)
   */
  async step(clock: Clock, signal: AbortSignal): Promise<number> {
    for (let i = 0; i < 4 && !signal.aborted; i++) {
      const wait = await this.#advance(clock, signal);
      if (wait > 0) return Math.min(wait, MAX_WAIT);
    }
    return 1000;
  }

  /** Send RELEASE for a held lease and forget it. Best effort: errors are swallowed. */
  async release(): Promise<void> {
    const lease = this.#lease;
    this.#lease = undefined;
    this.#state = "init";
    if (!lease) return;
    try {
      await this.#send(
        this.#message("release", {
          ciaddr: lease.address,
          options: { serverId: lease.server },
        }, false),
        lease.server,
      );
    } catch {
      // The link may be gone already; the server will expire the lease.
    }
  }

  /** Close the socket (a later step reopens it). */
  close(): void {
    this.#socket?.close();
    this.#socket = undefined;
  }

  async #advance(clock: Clock, signal: AbortSignal): Promise<number> {
    const now = clock.monotonic();
    const lease = this.#lease;
    if (lease && now >= lease.expiresAt) {
      this.#drop("expired");
      return 0;
    }
    switch (this.#state) {
      case "init":
      case "selecting":
        return await this.#discover(clock, signal);
      case "requesting":
        return await this.#request(clock, signal);
      case "bound":
        if (now < lease!.renewAt) return lease!.renewAt - now;
        this.#state = "renewing";
        return 0;
      case "renewing":
        if (now >= lease!.rebindAt) {
          this.#state = "rebinding";
          return 0;
        }
        return await this.#extend(clock, signal, lease!.server, lease!.rebindAt);
      case "rebinding":
        return await this.#extend(clock, signal, undefined, lease!.expiresAt);
    }
  }

  async #discover(clock: Clock, signal: AbortSignal): Promise<number> {
    this.#state = "selecting";
    const discover = this.#message("discover", { options: {} }, true);
    await this.#send(discover);
    const offer = await this.#reply(discover.xid, ["offer"], signal);
    if (!offer?.options.serverId || offer.yiaddr === "0.0.0.0") return this.#backoff();
    this.#offer = offer;
    this.#state = "requesting";
    return await this.#request(clock, signal);
  }

  async #request(clock: Clock, signal: AbortSignal): Promise<number> {
    const offer = this.#offer!;
    const request = this.#message("request", {
      xid: offer.xid,
      options: { requestedIp: offer.yiaddr, serverId: offer.options.serverId },
    }, true);
    await this.#send(request);
    const reply = await this.#reply(request.xid, ["ack", "nak"], signal);
    if (!reply) {
      this.#state = "init";
      return this.#backoff();
    }
    if (reply.type === "nak") {
      this.#state = "init";
      this.#o.onChange?.("nak");
      return this.#backoff();
    }
    this.#bind(reply, clock, "acquired");
    return 0;
  }

  /** Renew (unicast to `server`) or rebind (broadcast); `until` is T2 or expiry. */
  async #extend(
    clock: Clock,
    signal: AbortSignal,
    server: string | undefined,
    until: number,
  ): Promise<number> {
    const lease = this.#lease!;
    const msg = this.#message("request", { ciaddr: lease.address, options: {} }, false);
    await this.#send(msg, server);
    const reply = await this.#reply(msg.xid, ["ack", "nak"], signal);
    if (reply?.type === "ack") {
      this.#bind(reply, clock, "renewed");
      return 0;
    }
    if (reply?.type === "nak") {
      this.#drop("nak");
      return 0;
    }
    const left = until - clock.monotonic();
    return left <= 0 ? 0 : Math.min(left, Math.max(left / 2, MIN_RENEW_RETRY));
  }

  #bind(ack: DhcpMessage, clock: Clock, what: "acquired" | "renewed"): void {
    const now = clock.monotonic();
    this.#lease = {
      ...leaseFromAck(ack, now, this.#lease?.server),
      wallOffsetMs: clock.now() - now,
    };
    this.#state = "bound";
    this.#attempts = 0;
    this.#offer = undefined;
    this.#o.onChange?.(what, this.#lease);
  }

  #drop(what: "expired" | "nak"): void {
    const lease = this.#lease;
    this.#lease = undefined;
    this.#state = "init";
    this.#o.onChange?.(what, lease);
  }

  /** RFC 2131 §4.1: 4 s, 8 s, ... up to 64 s between attempts. */
  #backoff(): number {
    return Math.min(64_000, 4000 * 2 ** this.#attempts++);
  }

  #message(
    type: DhcpMessageType,
    fields: { xid?: number; ciaddr?: string; options: DhcpMessage["options"] },
    broadcast: boolean,
  ): DhcpMessage {
    return {
      op: 1,
      type,
      xid: fields.xid ?? (this.#o.xid ?? randomXid)(),
      secs: 0,
      broadcast,
      ciaddr: fields.ciaddr ?? "0.0.0.0",
      yiaddr: "0.0.0.0",
      siaddr: "0.0.0.0",
      giaddr: "0.0.0.0",
      chaddr: this.#o.mac,
      options: type === "release"
        ? fields.options
        : { maxMessageSize: 1500, parameterList: PARAMETERS, ...fields.options },
    };
  }

  async #send(m: DhcpMessage, to?: string): Promise<void> {
    this.#socket ??= this.#o.openSocket();
    await this.#socket.send(encodeDhcp(m), to ?? "255.255.255.255", 67);
  }

  /** The first reply for `xid` and our MAC of one of `types`, within the reply timeout. */
  async #reply(
    xid: number,
    types: DhcpMessageType[],
    signal: AbortSignal,
  ): Promise<DhcpMessage | undefined> {
    const socket = this.#socket!;
    const onAbort = () => this.close();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const deadline = performance.now() + (this.#o.replyTimeoutMs ?? 3000);
      while (!signal.aborted) {
        const left = deadline - performance.now();
        if (left <= 0) return undefined;
        const d = await socket.receive(left);
        if (!d) return undefined;
        let m: DhcpMessage;
        try {
          m = decodeDhcp(d.data);
        } catch {
          continue; // not DHCP, or garbled: not ours
        }
        if (m.op === 2 && m.xid === xid && m.chaddr === this.#o.mac && types.includes(m.type)) {
          return m;
        }
      }
      return undefined;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}

/** Pure: the lease an ACK grants at `now`. T1/T2 default to 50%/87.5% of the lease. */
export function leaseFromAck(ack: DhcpMessage, now: number, knownServer?: string): Lease {
  const o = ack.options;
  const seconds = o.leaseTime ?? 3600;
  const at = (s: number | undefined, fallback: number) =>
    seconds === INFINITE ? Number.POSITIVE_INFINITY : now + 1000 * (s ?? fallback);
  const lease: Lease = {
    address: ack.yiaddr,
    prefixLen: (o.subnetMask ? maskToPrefix(o.subnetMask) : undefined) ??
      classfulPrefix(ack.yiaddr),
    server: o.serverId ?? knownServer ?? ack.siaddr,
    routers: o.routers ?? [],
    dnsServers: o.dnsServers ?? [],
    leaseSeconds: seconds,
    acquiredAt: now,
    renewAt: at(o.renewalTime, seconds * 0.5),
    rebindAt: at(o.rebindingTime, seconds * 0.875),
    expiresAt: at(seconds, seconds),
  };
  if (o.domainName) lease.domain = o.domainName;
  if (o.hostname) lease.hostname = o.hostname;
  return lease;
}

function randomXid(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}
