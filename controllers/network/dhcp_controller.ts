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
import {
  DHCP_LEASE,
  type DhcpLeaseSpec,
  LINK_SPEC,
  LINK_STATUS,
  type LinkStatusSpec,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { NetworkBackend } from "../../platform/network/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import { DhcpClient, type Lease } from "./dhcp_client.ts";
import { hasErrno } from "./apply_error.ts";
import { NETWORK_NAMESPACE } from "./spec_transform.ts";

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
  readonly #deps: DhcpControllerDeps;
  readonly #clients = new Map<string, DhcpClient>();
  /** When each client's next step is due (runtime clock ms). */
  readonly #due = new Map<string, number>();

  constructor(deps: DhcpControllerDeps) {
    this.#deps = deps;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const wanted = ctx.list(LINK_SPEC).filter((r) => r.metadata.phase === "running" && r.spec.dhcp)
      .map((r) => r.spec.name);
    for (const [link, client] of this.#clients) {
      if (!wanted.includes(link)) await this.#stop(link, client);
    }
    let next = Number.POSITIVE_INFINITY;
    for (const link of wanted) {
      const ptr = { type: DHCP_LEASE, namespace: NETWORK_NAMESPACE, id: link } as const;
      const status = ctx.find(LINK_STATUS, NETWORK_NAMESPACE, link)?.spec;
      if (!status || !linkReady(status)) {
        // Wait for the link (its LinkStatus re-runs us); a lease survives a flap until it expires.
        if (ctx.find(DHCP_LEASE, NETWORK_NAMESPACE, link)) ctx.keep(ptr);
        continue;
      }
      const client = this.#client(link, status);
      const due = this.#due.get(link) ?? 0;
      const now = ctx.clock.monotonic();
      if (now < due) {
        // Re-run by an unrelated change: nothing is due, so no early retransmission.
        next = Math.min(next, due - now);
        ctx.keep(ptr);
        continue;
      }
      try {
        const wait = await client.step(ctx.clock, ctx.signal);
        this.#due.set(link, ctx.clock.monotonic() + wait);
        next = Math.min(next, wait);
      } catch (e) {
        if (!hasErrno(e, "ENETUNREACH", "ENODEV", "ENETDOWN")) throw e;
        client.close(); // the link went away under us; its LinkStatus re-runs us
      }
      if (ctx.signal.aborted) return;
      await ctx.apply(ptr, leaseSpec(link, client.state, client.lease));
    }
    if (Number.isFinite(next)) ctx.requeueAfter(next);
  }

  /** RELEASE every lease and close every socket (for shutdown). Best effort. */
  async shutdown(): Promise<void> {
    for (const [link, client] of this.#clients) await this.#stop(link, client);
  }

  #client(link: string, status: LinkStatusSpec): DhcpClient {
    let c = this.#clients.get(link);
    if (!c) {
      c = new DhcpClient({
        link,
        mac: status.mac,
        openSocket: () => this.#deps.backend.openDhcpSocket(link),
        replyTimeoutMs: this.#deps.replyTimeoutMs,
        onChange: (what, lease) =>
          this.#deps.events?.emit(
            "network",
            `dhcp/${link}`,
            what,
            lease ? `${lease.address}/${lease.prefixLen} from ${lease.server}` : "",
          ),
      });
      this.#clients.set(link, c);
    }
    return c;
  }

  async #stop(link: string, client: DhcpClient): Promise<void> {
    this.#clients.delete(link);
    this.#due.delete(link);
    await client.release();
    client.close();
  }
}

/** Link is administratively up and carrier is present (or the driver cannot tell). */
function linkReady(s: LinkStatusSpec): boolean {
  return s.up && (s.operstate === "up" || s.operstate === "unknown");
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
