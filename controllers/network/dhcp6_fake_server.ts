/**
 * A scriptable DHCPv6 server (IA_NA) at the socket level, for tests of the
 * DHCPv6 client through the controllers on the fake network backend: it
 * listens on port 547 of one end of a fake veth pair (the client's SOLICIT,
 * RENEW and REBIND reach it on ff02::1:2), answers SOLICIT with ADVERTISE and
 * REQUEST, RENEW and REBIND with REPLY to the sender's link-local address, as
 * a real server would, unless told to stay silent or to refuse (NoBinding,
 * NoAddrsAvail). It records every message it receives and where it was sent.
 * The DHCPv4 counterpart is dhcp_fake_server.ts.
 * @module
 */
import type { DhcpSocket, NetworkBackend } from "../../platform/network/mod.ts";
import { FakeNetworkBackend, parseIp } from "../../platform/network/mod.ts";
import { decodeDhcp6, DHCP6_OPT, DHCP6_TYPE, type Dhcp6Message, duidLl } from "./dhcp6_packet.ts";
import { STATUS } from "./dhcp6_client.ts";
import { ReceivedWaiters } from "./received_waiters.ts";

/** The client messages the server tells apart. */
export type Dhcp6Kind = "solicit" | "request" | "renew" | "rebind" | "release" | "other";

/** How the server answers one kind of message. */
export type FakeServer6Mode = "normal" | "silent" | "no-binding" | "no-addrs-avail";

/** Server settings; change them between steps of a test to change later answers. */
export interface FakeDhcp6ServerOptions {
  /** The address leased to every client. */
  address: string;
  /** Seconds; 0 lets the client choose (0.5 and 0.8 of the preferred lifetime). */
  t1: number;
  t2: number;
  preferred: number;
  valid: number;
  /** Option 23. */
  dnsServers?: string[];
  /** Option 24. */
  domains?: string[];
  /** Option 7 in ADVERTISE. */
  preference?: number;
  /** The server's DUID. @default DUID-LL of 02:00:00:00:05:47 */
  duid?: Uint8Array;
}

/** One received message. */
export interface Received6 {
  kind: Dhcp6Kind;
  message: Dhcp6Message;
  /** Where the client sent it (ff02::1:2 or a unicast address). */
  to: string;
  /** The client's source address (its link-local). */
  from: string;
}

const KINDS: Record<number, Dhcp6Kind> = {
  [DHCP6_TYPE.SOLICIT]: "solicit",
  [DHCP6_TYPE.REQUEST]: "request",
  [DHCP6_TYPE.RENEW]: "renew",
  [DHCP6_TYPE.REBIND]: "rebind",
  [DHCP6_TYPE.RELEASE]: "release",
};

/** A running fake server; `close()` it at the end of the test. */
export class FakeDhcp6Server {
  readonly received: Received6[] = [];
  /** How each kind is answered (RELEASE always gets a REPLY with Success). */
  readonly modes: Record<Exclude<Dhcp6Kind, "release" | "other">, FakeServer6Mode> = {
    solicit: "normal",
    request: "normal",
    renew: "normal",
    rebind: "normal",
  };
  readonly duid: Uint8Array;
  readonly #once: Array<{ kind: Dhcp6Kind; mode: FakeServer6Mode }> = [];
  readonly #socket: DhcpSocket;
  readonly #loop: Promise<void>;
  readonly #waiters = new ReceivedWaiters<Received6>("fake DHCPv6 server");

  constructor(
    readonly backend: NetworkBackend,
    link: string,
    readonly options: FakeDhcp6ServerOptions,
  ) {
    this.duid = options.duid ?? duidLl("02:00:00:00:05:47");
    this.#socket = backend.openDhcp6Socket(link, 547);
    this.#loop = this.#serve();
  }

  /** Answer the next message of `kind` with `mode`, then as {@link modes} says again. */
  answerNext(kind: Dhcp6Kind, mode: FakeServer6Mode): void {
    this.#once.push({ kind, mode });
  }

  /** Resolves with the first received message matching `pred` (already received or next). */
  next(pred: (r: Received6) => boolean, timeoutMs = 5000): Promise<Received6> {
    return this.#waiters.first(this.received, pred, timeoutMs);
  }

  /** Messages of one kind received so far. */
  count(kind: Dhcp6Kind): number {
    return this.received.filter((r) => r.kind === kind).length;
  }

  /** The kinds received so far, in order. */
  kinds(): Dhcp6Kind[] {
    return this.received.map((r) => r.kind);
  }

  async close(): Promise<void> {
    this.#socket.close();
    await this.#loop;
  }

  async #serve(): Promise<void> {
    for (;;) {
      const d = await this.#socket.receive(60_000);
      if (!d) return; // closed (or a minute of silence, which no test waits for)
      let message: Dhcp6Message;
      try {
        message = decodeDhcp6(d.data);
      } catch {
        continue;
      }
      const r: Received6 = {
        kind: KINDS[message.type] ?? "other",
        message,
        to: this.#destination(d.data),
        from: d.from,
      };
      this.received.push(r);
      this.#waiters.arrived(r);
      const reply = this.#answer(r);
      if (reply) await this.#socket.send(reply, d.from, d.port);
    }
  }

  /** How the client addressed `data`: the fake backend records every send with its destination. */
  #destination(data: Uint8Array): string {
    const calls = this.backend instanceof FakeNetworkBackend
      ? this.backend.faults.callsOf("dhcpSend")
      : [];
    const same = (b: unknown) =>
      b instanceof Uint8Array && b.length === data.length && b.every((x, i) => x === data[i]);
    return String(calls.findLast((args) => same(args[1]))?.[2] ?? "unknown");
  }

  #mode(kind: Dhcp6Kind): FakeServer6Mode {
    const i = this.#once.findIndex((o) => o.kind === kind);
    if (i >= 0) return this.#once.splice(i, 1)[0].mode;
    return kind === "release" || kind === "other" ? "normal" : this.modes[kind];
  }

  #answer(r: Received6): Uint8Array | undefined {
    if (r.kind === "other" || !r.message.clientId) return undefined;
    const mode = this.#mode(r.kind);
    if (mode === "silent") return undefined;
    const type = r.kind === "solicit" ? DHCP6_TYPE.ADVERTISE : DHCP6_TYPE.REPLY;
    const iaid = r.message.iaNa?.iaid ?? 0;
    if (r.kind === "release") return this.#encode(type, r.message, { status: 0 });
    if (mode === "no-addrs-avail" && r.kind === "solicit") {
      return this.#encode(type, r.message, { status: STATUS.NO_ADDRS_AVAIL });
    }
    if (mode === "no-addrs-avail" || mode === "no-binding") {
      const code = mode === "no-binding" ? STATUS.NO_BINDING : STATUS.NO_ADDRS_AVAIL;
      return this.#encode(type, r.message, { iaid, iaStatus: code });
    }
    return this.#encode(type, r.message, { iaid, lease: true });
  }

  /** A server message to `to`: ids, and the lease, a status in the IA or at message level. */
  #encode(
    type: number,
    to: Dhcp6Message,
    o: { iaid?: number; lease?: boolean; iaStatus?: number; status?: number },
  ): Uint8Array {
    const s = this.options;
    const id = to.transactionId;
    const out = [type, (id >> 16) & 0xff, (id >> 8) & 0xff, id & 0xff];
    option(out, DHCP6_OPT.CLIENTID, [...to.clientId!]);
    option(out, DHCP6_OPT.SERVERID, [...this.duid]);
    if (o.status !== undefined) option(out, DHCP6_OPT.STATUS_CODE, statusBody(o.status));
    if (type === DHCP6_TYPE.ADVERTISE && s.preference !== undefined) {
      option(out, DHCP6_OPT.PREFERENCE, [s.preference]);
    }
    if (o.iaid !== undefined) {
      const ia = [...u32(o.iaid), ...u32(o.lease ? s.t1 : 0), ...u32(o.lease ? s.t2 : 0)];
      if (o.iaStatus !== undefined) option(ia, DHCP6_OPT.STATUS_CODE, statusBody(o.iaStatus));
      if (o.lease) {
        option(ia, DHCP6_OPT.IAADDR, [...ip6(s.address), ...u32(s.preferred), ...u32(s.valid)]);
      }
      option(out, DHCP6_OPT.IA_NA, ia);
    }
    if (o.lease && s.dnsServers?.length) {
      option(out, DHCP6_OPT.DNS_SERVERS, s.dnsServers.flatMap(ip6));
    }
    if (o.lease && s.domains?.length) {
      option(out, DHCP6_OPT.DOMAIN_LIST, s.domains.flatMap(dnsName));
    }
    return Uint8Array.from(out);
  }
}

function option(out: number[], code: number, body: number[]): void {
  out.push((code >> 8) & 0xff, code & 0xff, (body.length >> 8) & 0xff, body.length & 0xff);
  out.push(...body);
}

function statusBody(code: number): number[] {
  return [(code >> 8) & 0xff, code & 0xff, ...new TextEncoder().encode(`status ${code}`)];
}

function u32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function ip6(address: string): number[] {
  const ip = parseIp(address);
  if (ip?.family !== "inet6") throw new TypeError(`Not an IPv6 address: "${address}"`);
  return [...ip.bytes];
}

/** RFC 1035 §3.1 labels, uncompressed. */
function dnsName(name: string): number[] {
  const labels = name.split(".").map((l) => new TextEncoder().encode(l));
  return [...labels.flatMap((l) => [l.length, ...l]), 0];
}
