/**
 * A scriptable DHCPv4 server at the socket level, for tests against the fake
 * network backend: it listens on port 67 of one end of a fake veth pair and
 * answers DISCOVER and REQUEST like a real server would, unless told to NAK
 * or stay silent. It records every message it receives.
 * @module
 */
import type { DhcpSocket, NetworkBackend } from "../../platform/network/mod.ts";
import { FakeNetworkBackend } from "../../platform/network/mod.ts";
import { decodeDhcp, type DhcpMessage, encodeDhcp } from "./dhcp_packet.ts";
import { ReceivedWaiters } from "./received_waiters.ts";

/** How the server answers. */
export type FakeServerMode = "normal" | "nak" | "silent";

/** Server settings. */
export interface FakeDhcpServerOptions {
  /** The server's own address (also its server id and the router it hands out). */
  serverIp: string;
  /** The address leased to every client. */
  leaseIp: string;
  prefixLen?: number;
  leaseSeconds?: number;
  dnsServers?: string[];
  domain?: string;
  hostname?: string;
}

/** A running fake server; `close()` it at the end of the test. */
export class FakeDhcpServer {
  /** Every DHCP message received, with whether it was broadcast. */
  readonly received: Array<{ message: DhcpMessage; to: "broadcast" | "unicast" }> = [];
  /** Applied to broadcast requests. */
  mode: FakeServerMode = "normal";
  /** Applied to unicast requests (renewals). */
  unicastMode: FakeServerMode = "normal";
  readonly #socket: DhcpSocket;
  readonly #loop: Promise<void>;
  readonly #waiters = new ReceivedWaiters<DhcpMessage>("fake DHCP server");

  constructor(
    readonly backend: NetworkBackend,
    link: string,
    readonly options: FakeDhcpServerOptions,
  ) {
    this.#socket = backend.openDhcpSocket(link, 67);
    this.#loop = this.#serve();
  }

  /** Resolves with the next received message matching `pred` (or one already received). */
  next(pred: (m: DhcpMessage) => boolean, timeoutMs = 5000): Promise<DhcpMessage> {
    return this.#waiters.first(this.received.map((r) => r.message), pred, timeoutMs);
  }

  /** Messages of one type received so far. */
  count(type: DhcpMessage["type"], to?: "broadcast" | "unicast"): number {
    return this.received.filter((r) => r.message.type === type && (!to || r.to === to)).length;
  }

  async close(): Promise<void> {
    this.#socket.close();
    await this.#loop;
  }

  async #serve(): Promise<void> {
    for (;;) {
      const d = await this.#socket.receive(60_000);
      if (!d) return; // closed (or a minute of silence, which no test waits for)
      let m: DhcpMessage;
      try {
        m = decodeDhcp(d.data);
      } catch {
        continue;
      }
      const to = this.#destination(d.data);
      this.received.push({ message: m, to });
      this.#waiters.arrived(m);
      const reply = this.#answer(m, to === "unicast" ? this.unicastMode : this.mode);
      if (reply) await this.#socket.send(encodeDhcp(reply), "255.255.255.255", 68);
    }
  }

  /** How the client addressed `data`: the fake backend records every send with its destination. */
  #destination(data: Uint8Array): "broadcast" | "unicast" {
    const calls = this.backend instanceof FakeNetworkBackend
      ? this.backend.faults.callsOf("dhcpSend")
      : [];
    const same = (b: unknown) =>
      b instanceof Uint8Array && b.length === data.length && b.every((x, i) => x === data[i]);
    const call = calls.findLast((args) => same(args[1]));
    return call && call[2] !== "255.255.255.255" ? "unicast" : "broadcast";
  }

  #answer(m: DhcpMessage, mode: FakeServerMode): DhcpMessage | undefined {
    if (mode === "silent" || m.op !== 1) return undefined;
    if (m.type !== "discover" && m.type !== "request") return undefined;
    if (m.type === "request" && mode === "nak") return this.#reply(m, "nak", "0.0.0.0");
    const o = this.options;
    return this.#reply(m, m.type === "discover" ? "offer" : "ack", o.leaseIp, {
      subnetMask: prefixToMask(o.prefixLen ?? 24),
      routers: [o.serverIp],
      dnsServers: o.dnsServers ?? [o.serverIp],
      leaseTime: o.leaseSeconds ?? 3600,
      ...(o.domain ? { domainName: o.domain } : {}),
      ...(o.hostname ? { hostname: o.hostname } : {}),
    });
  }

  #reply(
    m: DhcpMessage,
    type: DhcpMessage["type"],
    yiaddr: string,
    options: DhcpMessage["options"] = {},
  ): DhcpMessage {
    return {
      op: 2,
      type,
      xid: m.xid,
      secs: 0,
      broadcast: m.broadcast,
      ciaddr: m.ciaddr,
      yiaddr,
      siaddr: this.options.serverIp,
      giaddr: "0.0.0.0",
      chaddr: m.chaddr,
      options: { serverId: this.options.serverIp, ...options },
    };
  }
}

function prefixToMask(len: number): string {
  const n = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return [24, 16, 8, 0].map((s) => (n >>> s) & 0xff).join(".");
}
