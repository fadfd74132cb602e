/**
 * The fake network backend's event subscription and DHCP socket: queues fed
 * by {@link FakeNetworkBackend}, which delivers datagrams across veth pairs.
 * @module
 */
import type {
  Datagram,
  DhcpSocket,
  EventGroup,
  NetworkEvent,
  NetworkSubscription,
} from "./backend.ts";
import { EventQueue } from "./event_queue.ts";

/** What a fake socket needs of its backend. */
export interface FakeWire {
  readonly faults: { check(op: string, args?: unknown[]): void };
  deliver(from: FakeDhcpSocket, data: Uint8Array, to: string, port: number): void;
}

/** A subscription to the fake kernel's events. */
export class FakeSubscription implements NetworkSubscription {
  readonly queue = new EventQueue<NetworkEvent>();
  constructor(
    readonly groups: ReadonlySet<EventGroup>,
    private readonly onClose: (s: FakeSubscription) => void,
  ) {}
  /** Queue a copy of `e` if it belongs to a group this subscription joined. */
  offer(e: NetworkEvent): void {
    if (this.groups.has(eventGroup(e))) this.queue.push(structuredClone(e));
  }
  nextEvent(timeoutMs: number): Promise<NetworkEvent | undefined> {
    return this.queue.next(timeoutMs);
  }
  close(): void {
    this.onClose(this);
    this.queue.close();
  }
  [Symbol.asyncIterator](): AsyncIterator<NetworkEvent> {
    return this.queue[Symbol.asyncIterator]();
  }
}

/**
 * A fake DHCP socket; datagrams travel across the fake veth pair. `family`
 * is what the socket was opened for: an IPv4 one (DHCPv4) or an IPv6-only
 * one (DHCPv6, IPV6_V6ONLY like the native socket); each only sees its own.
 */
export class FakeDhcpSocket implements DhcpSocket {
  readonly #queue = new EventQueue<Datagram>();
  constructor(
    readonly link: string,
    readonly port: number,
    private readonly net: FakeWire,
    private readonly onClose: (s: FakeDhcpSocket) => void,
    readonly family: "inet" | "inet6" = "inet",
  ) {}
  async send(data: Uint8Array, to = "255.255.255.255", port = 67): Promise<void> {
    await Promise.resolve();
    this.net.faults.check("dhcpSend", [this.link, data, to, port]);
    this.net.deliver(this, data, to, port);
  }
  receive(timeoutMs: number): Promise<Datagram | undefined> {
    return this.#queue.next(timeoutMs);
  }
  push(d: Datagram): void {
    this.#queue.push(d);
  }
  close(): void {
    this.onClose(this);
    this.#queue.close();
  }
}

/** The multicast group the kernel sends `e` to. */
export function eventGroup(e: NetworkEvent): EventGroup {
  if (e.kind === "link") return "link";
  const family = e.kind === "address" ? e.address.family : e.route.family;
  return `${family === "inet" ? "ipv4" : "ipv6"}-${e.kind}`;
}
