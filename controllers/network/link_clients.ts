/**
 * The per-link client loop both DHCP controllers run (DHCPv4 and DHCPv6): one
 * client per link that wants it and is up, stepped when its timer is due (a
 * requeue on the runtime's monotonic clock, so an unrelated change never
 * retransmits early), its lease kept while the link flaps, and RELEASEd and
 * closed when the link stops wanting it. What differs (the client, the lease
 * resource, the errors that mean "the link is not ready") is given.
 * @module
 */
import type { LinkStatusSpec, ResourceSpecs } from "../../resources/mod.ts";
import { LINK_STATUS } from "../../resources/mod.ts";
import type { Clock, ReconcileContext } from "../../runtime/mod.ts";
import { hasErrno } from "./apply_error.ts";
import { NETWORK_NAMESPACE } from "./spec_transform.ts";

/** What the loop needs of a client. */
export interface LinkClient {
  /** Do what is due; resolves with the ms until the next step. */
  step(clock: Clock, signal: AbortSignal): Promise<number>;
  release(): Promise<void>;
  close(): void;
}

/** The lease resources a client publishes. */
type LeaseType = "DhcpLease" | "Dhcp6Lease";

/** What differs between the DHCP controllers. */
export interface LinkClientsOptions<C extends LinkClient, K extends LeaseType> {
  readonly leaseType: K;
  /** errnos meaning the link is not (or no longer) usable: the socket is closed, not failed. */
  readonly transientErrnos: readonly string[];
  /** Retry this soon after a transient error; absent: wait for LinkStatus to re-run us. */
  readonly retryAfterTransientMs?: number;
  create(link: string, status: LinkStatusSpec): C;
  spec(link: string, client: C): ResourceSpecs[K];
}

/** Link is administratively up and carrier is present (or the driver cannot tell). */
export function linkReady(s: LinkStatusSpec): boolean {
  return s.up && (s.operstate === "up" || s.operstate === "unknown");
}

/** One client per wanted link, stepped when due. */
export class LinkClients<C extends LinkClient, K extends LeaseType> {
  readonly #clients = new Map<string, C>();
  /** When each client's next step is due (runtime monotonic ms). */
  readonly #due = new Map<string, number>();

  constructor(private readonly o: LinkClientsOptions<C, K>) {}

  /** Bring the clients in line with `wanted`, step the due ones, publish their leases. */
  async reconcile(ctx: ReconcileContext<ResourceSpecs>, wanted: readonly string[]): Promise<void> {
    for (const [link, client] of this.#clients) {
      if (!wanted.includes(link)) await this.#stop(link, client);
    }
    let next = Number.POSITIVE_INFINITY;
    for (const link of wanted) {
      const ptr = { type: this.o.leaseType, namespace: NETWORK_NAMESPACE, id: link };
      const status = ctx.find(LINK_STATUS, NETWORK_NAMESPACE, link)?.spec;
      if (!status || !linkReady(status)) {
        // Wait for the link (its LinkStatus re-runs us); a lease survives a flap until it expires.
        if (ctx.find(this.o.leaseType, NETWORK_NAMESPACE, link)) ctx.keep(ptr);
        continue;
      }
      const client = this.#client(link, status);
      const now = ctx.clock.monotonic();
      const due = this.#due.get(link) ?? 0;
      if (now < due) {
        next = Math.min(next, due - now);
        ctx.keep(ptr);
        continue;
      }
      try {
        const wait = await client.step(ctx.clock, ctx.signal);
        this.#due.set(link, ctx.clock.monotonic() + wait);
        next = Math.min(next, wait);
      } catch (e) {
        if (!hasErrno(e, ...this.o.transientErrnos)) throw e;
        client.close();
        const retry = this.o.retryAfterTransientMs;
        if (retry !== undefined) next = Math.min(next, retry);
      }
      if (ctx.signal.aborted) return;
      await ctx.apply(ptr, this.o.spec(link, client));
    }
    if (Number.isFinite(next)) ctx.requeueAfter(next);
  }

  /** RELEASE every lease and close every socket (for shutdown). Best effort. */
  async stopAll(): Promise<void> {
    for (const [link, client] of this.#clients) await this.#stop(link, client);
  }

  #client(link: string, status: LinkStatusSpec): C {
    let c = this.#clients.get(link);
    if (!c) {
      c = this.o.create(link, status);
      this.#clients.set(link, c);
    }
    return c;
  }

  async #stop(link: string, client: C): Promise<void> {
    this.#clients.delete(link);
    this.#due.delete(link);
    await client.release();
    client.close();
  }
}
