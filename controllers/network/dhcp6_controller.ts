/**
 * Dhcp6ClientController: runs a DHCPv6 client (IA_NA) on every link whose
 * LinkSpec asks for `dhcp6` and whose LinkStatus is up, and publishes each
 * client's state and lease as Dhcp6Lease, which the address and resolver
 * config controllers merge. Mirrors the DHCPv4 controller: timers are
 * requeues on the runtime's monotonic clock; a link that stops wanting
 * DHCPv6 gets a RELEASE and its Dhcp6Lease is removed, which withdraws the
 * /128 and the resolvers. The DUID is DUID-LL of the link's MAC and the IAID
 * a hash of the link name, both stable across boots without storage
 * (docs/decisions.md). Inputs: LinkSpec, LinkStatus. Output: Dhcp6Lease.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import { DHCP6_LEASE, type Dhcp6LeaseSpec, LINK_SPEC, LINK_STATUS } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { NetworkBackend } from "../../platform/network/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import { Dhcp6Client } from "./dhcp6_client.ts";
import type { Lease6 } from "./dhcp6_lease.ts";
import { duidLl } from "./dhcp6_packet.ts";
import { LinkClients } from "./link_clients.ts";

/** Dependencies of {@link Dhcp6ClientController}. */
export interface Dhcp6ControllerDeps {
  backend: NetworkBackend;
  events?: EventBus;
  /** Real-time bound on waiting for replies to one send. @default 1000 */
  replyTimeoutMs?: number;
}

/** Runs the DHCPv6 clients. */
export class Dhcp6ClientController implements MachineController {
  readonly name = "network.Dhcp6ClientController";
  readonly inputs = [
    { type: LINK_SPEC, kind: "weak" },
    { type: LINK_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [{ type: DHCP6_LEASE, kind: "exclusive" }] as const;
  readonly #clients: LinkClients<Dhcp6Client, typeof DHCP6_LEASE>;

  constructor(deps: Dhcp6ControllerDeps) {
    this.#clients = new LinkClients({
      leaseType: DHCP6_LEASE,
      // EADDRNOTAVAIL: no link-local address yet (DAD); retried in a second.
      transientErrnos: ["ENETUNREACH", "ENODEV", "ENETDOWN", "EADDRNOTAVAIL"],
      retryAfterTransientMs: 1000,
      create: (link, status) =>
        new Dhcp6Client({
          link,
          duid: duidLl(status.mac),
          iaid: iaidOf(link),
          openSocket: () => deps.backend.openDhcp6Socket(link),
          replyTimeoutMs: deps.replyTimeoutMs,
          onChange: (what, lease) =>
            deps.events?.emit(
              "network",
              `dhcp6/${link}`,
              what,
              lease ? `${lease.address}/128 from ${lease.server}` : "",
            ),
        }),
      spec: (link, client) => lease6Spec(link, client.state, client.lease),
    });
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const wanted = ctx.list(LINK_SPEC)
      .filter((r) => r.metadata.phase === "running" && r.spec.dhcp6 && !r.spec.master)
      .map((r) => r.spec.name);
    await this.#clients.reconcile(ctx, wanted);
  }

  /** RELEASE every lease and close every socket (for shutdown). Best effort. */
  async shutdown(): Promise<void> {
    await this.#clients.stopAll();
  }
}

/** FNV-1a of the link name: an IAID stable across boots for the same link name. */
export function iaidOf(link: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(link)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** Pure: the Dhcp6Lease resource for a client's state. */
export function lease6Spec(
  link: string,
  state: Dhcp6Client["state"],
  lease: Lease6 | undefined,
): Dhcp6LeaseSpec {
  if (!lease) return { link, state };
  const wall = lease.wallOffsetMs ?? 0;
  const iso = (ms: number) => Number.isFinite(ms) ? new Date(ms + wall).toISOString() : "never";
  return {
    link,
    state,
    address: lease.address,
    prefixLen: lease.prefixLen,
    server: lease.server,
    dnsServers: lease.dnsServers,
    domains: lease.domains,
    preferredSeconds: lease.preferredSeconds,
    validSeconds: lease.validSeconds,
    acquired: iso(lease.acquiredAt),
    renewAt: iso(lease.renewAt),
    rebindAt: iso(lease.rebindAt),
    expiresAt: iso(lease.expiresAt),
  };
}
