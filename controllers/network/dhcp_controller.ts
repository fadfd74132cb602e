/**
 * DhcpClientController: runs a DHCPv4 client on every link whose LinkSpec asks
 * for DHCP and whose LinkStatus is up, and publishes each client's state and
 * lease as DhcpLease. Timers (T1, T2, expiry, retries) are requeues on the
 * runtime's clock. When a link stops wanting DHCP its lease is RELEASEd and
 * its DhcpLease removed, which withdraws the leased address and routes.
 * Inputs: LinkSpec, LinkStatus. Output: DhcpLease.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import { DHCP_LEASE, type DhcpLeaseSpec, LINK_SPEC, LINK_STATUS } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { NetworkBackend } from "../../platform/network/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import { DhcpClient, type Lease } from "./dhcp_client.ts";
import { LinkClients } from "./link_clients.ts";

/** Dependencies of {@link DhcpClientController}. */
export interface DhcpControllerDeps {
  backend: NetworkBackend;
  events?: EventBus;
  /** Real-time bound on waiting for one server reply. @default 3000 */
  replyTimeoutMs?: number;
}

/** Runs the DHCPv4 clients. */
export class DhcpClientController implements MachineController {
  readonly name = "network.DhcpClientController";
  readonly inputs = [
    { type: LINK_SPEC, kind: "weak" },
    { type: LINK_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [{ type: DHCP_LEASE, kind: "exclusive" }] as const;
  readonly #clients: LinkClients<DhcpClient, typeof DHCP_LEASE>;

  constructor(deps: DhcpControllerDeps) {
    this.#clients = new LinkClients({
      leaseType: DHCP_LEASE,
      // The link went away under us: its LinkStatus re-runs us.
      transientErrnos: ["ENETUNREACH", "ENODEV", "ENETDOWN"],
      create: (link, status) =>
        new DhcpClient({
          link,
          mac: status.mac,
          openSocket: () => deps.backend.openDhcpSocket(link),
          replyTimeoutMs: deps.replyTimeoutMs,
          onChange: (what, lease) =>
            deps.events?.emit(
              "network",
              `dhcp/${link}`,
              what,
              lease ? `${lease.address}/${lease.prefixLen} from ${lease.server}` : "",
            ),
        }),
      spec: (link, client) => leaseSpec(link, client.state, client.lease),
    });
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const wanted = ctx.list(LINK_SPEC).filter((r) => r.metadata.phase === "running" && r.spec.dhcp)
      .map((r) => r.spec.name);
    await this.#clients.reconcile(ctx, wanted);
  }

  /** RELEASE every lease and close every socket (for shutdown). Best effort. */
  async shutdown(): Promise<void> {
    await this.#clients.stopAll();
  }
}

/** Pure: the DhcpLease resource for a client's state. */
export function leaseSpec(
  link: string,
  state: DhcpClient["state"],
  lease: Lease | undefined,
): DhcpLeaseSpec {
  const shown = state === "init" ? "selecting" : state;
  if (!lease) return { link, state: shown };
  // Lease times are monotonic; shown as the wall time they stood for when the lease was bound.
  const wall = lease.wallOffsetMs ?? 0;
  const iso = (ms: number) => Number.isFinite(ms) ? new Date(ms + wall).toISOString() : "never";
  return {
    link,
    state: shown,
    address: lease.address,
    prefixLen: lease.prefixLen,
    server: lease.server,
    routers: lease.routers,
    dnsServers: lease.dnsServers,
    ...(lease.domain ? { domain: lease.domain } : {}),
    ...(lease.hostname ? { hostname: lease.hostname } : {}),
    leaseSeconds: lease.leaseSeconds,
    acquired: iso(lease.acquiredAt),
    renewAt: iso(lease.renewAt),
    rebindAt: iso(lease.rebindAt),
    expiresAt: iso(lease.expiresAt),
  };
}
