/**
 * LinkSpecController: creates, enslaves and deletes virtual links (bonds,
 * VLANs, bridges) by `link_plan.ts`'s plan, then makes each link's admin
 * state and MTU match its LinkSpec. It remembers what each link was like
 * before it first changed it, and on teardown puts back only what it changed;
 * it deletes only links it created (alias `machined`). Inputs: LinkSpec
 * (strong, with a finalizer), LinkStatus (so a hotplugged link is configured
 * when it appears). No outputs: LinkStatus shows the result.
 * @module
 */
import type { MachineController, MachineResourceOf, ResourceSpecs } from "../../resources/mod.ts";
import { LINK_SPEC, LINK_STATUS, type LinkSpecSpec } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { Ipv6ConfKey, LinkInfo, NetworkBackend } from "../../platform/network/mod.ts";
import { hasErrno, NetworkApplyError } from "./apply_error.ts";
import { type LinkStep, planLinks } from "./link_plan.ts";

/** A link's state before machined first changed it. */
interface Original {
  up?: boolean;
  mtu?: number;
  /** The link's own IPv6 settings, before SLAAC was turned on or off. */
  ipv6?: Partial<Record<Ipv6ConfKey, number>>;
}

/** Applies LinkSpecs through the network backend. */
export class LinkSpecController implements MachineController {
  readonly name = "network.LinkSpecController";
  readonly inputs = [
    { type: LINK_SPEC, kind: "strong" },
    { type: LINK_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [] as const;
  readonly #backend: NetworkBackend;
  readonly #original = new Map<string, Original>();

  constructor(deps: { backend: NetworkBackend }) {
    this.#backend = deps.backend;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    let observed = await this.#backend.listLinks();
    const wanted = ctx.list(LINK_SPEC).filter((r) => r.metadata.phase !== "tearingDown");
    const plan = planLinks(wanted.map((r) => r.spec), observed);
    for (const step of plan.steps) await this.#step(step);
    if (plan.steps.length > 0) observed = await this.#backend.listLinks();
    const links = new Map(observed.map((l) => [l.name, l]));
    for (const r of ctx.list(LINK_SPEC)) {
      if (r.metadata.phase === "tearingDown") {
        await this.#restore(r.spec.name, links.get(r.spec.name));
        ctx.removeFinalizer(r.metadata);
        continue;
      }
      ctx.addFinalizer(r.metadata);
      const link = links.get(r.spec.name);
      if (link) await this.#apply(r, link);
    }
    const [conflict] = plan.conflicts;
    if (conflict) {
      const cause = new Error("a link of that name exists and machined did not create it");
      throw new NetworkApplyError(`create ${conflict.kind}`, conflict.link, conflict.link, {
        cause,
      });
    }
  }

  /** One step of the plan; EEXIST on create and ENODEV on delete count as done. */
  async #step(step: LinkStep): Promise<void> {
    const b = this.#backend;
    switch (step.op) {
      case "delete":
        return await this.#do("delete", step.link, step.link, () => b.deleteLink(step.link));
      case "release":
        return await this.#do(
          `release from ${step.from}`,
          step.link,
          step.link,
          () => b.setLinkMaster(step.link, undefined),
        );
      case "create":
        try {
          return await b.createLink(step.spec);
        } catch (e) {
          if (hasErrno(e, "EEXIST")) return; // appeared meanwhile: the next pass compares it
          throw new NetworkApplyError(`create ${step.spec.kind}`, step.spec.name, step.spec.name, {
            cause: e,
          });
        }
      case "down":
        return await this.#do(
          "bring down (to enslave)",
          step.link,
          step.link,
          () => b.setLinkUp(step.link, false),
        );
      case "enslave":
        return await this.#do(
          `enslave to ${step.master}`,
          step.link,
          step.link,
          () => b.setLinkMaster(step.link, step.master),
        );
    }
  }

  async #apply(r: MachineResourceOf<typeof LINK_SPEC>, link: LinkInfo): Promise<void> {
    const spec: LinkSpecSpec = r.spec;
    const orig = this.#original.get(spec.name) ?? {};
    this.#original.set(spec.name, orig); // kept even when a step below fails
    // Before the link comes up: its first router solicitation then already counts.
    if (spec.slaac !== undefined) await this.#applySlaac(spec.name, spec.slaac, orig);
    else await this.#restoreIpv6(spec.name, orig);
    const mtu = spec.mtu ?? orig.mtu;
    if (mtu !== undefined && link.mtu !== mtu) {
      if (orig.mtu === undefined) orig.mtu = link.mtu;
      await this.#do(
        "set MTU",
        String(mtu),
        spec.name,
        () => this.#backend.setLinkMtu(spec.name, mtu),
      );
    }
    if (link.up !== spec.up) {
      if (orig.up === undefined) orig.up = link.up;
      await this.#do(
        spec.up ? "bring up" : "bring down",
        spec.name,
        spec.name,
        () => this.#backend.setLinkUp(spec.name, spec.up),
      );
    }
  }

  /** The link's own accept_ra/autoconf (never `default`'s or `all`'s), remembering what was there. */
  async #applySlaac(name: string, slaac: boolean, orig: Original): Promise<void> {
    for (const [key, want] of slaacSettings(slaac)) {
      let have: number;
      try {
        have = await this.#backend.getIpv6Conf(name, key);
      } catch (e) {
        if (hasErrno(e, "ENODEV")) return;
        throw new NetworkApplyError(`read ipv6 ${key}`, name, name, { cause: e });
      }
      if (have === want) continue;
      orig.ipv6 ??= {};
      orig.ipv6[key] ??= have;
      await this.#do(
        `set ipv6 ${key} to ${want}`,
        name,
        name,
        () => this.#backend.setIpv6Conf(name, key, want),
      );
    }
  }

  /** Put back the IPv6 settings this controller changed on `name`. */
  async #restoreIpv6(name: string, orig: Original): Promise<void> {
    const saved = orig.ipv6 ?? {};
    for (const [key, value] of Object.entries(saved) as [Ipv6ConfKey, number][]) {
      await this.#do(
        `restore ipv6 ${key} to ${value}`,
        name,
        name,
        () => this.#backend.setIpv6Conf(name, key, value),
      );
      delete saved[key]; // only once written: a failure is retried
    }
    delete orig.ipv6;
  }

  /** Undo what this controller changed on `name`, then forget it. */
  async #restore(name: string, link: LinkInfo | undefined): Promise<void> {
    const orig = this.#original.get(name);
    this.#original.delete(name);
    if (!orig || !link) return;
    await this.#restoreIpv6(name, orig);
    if (orig.mtu !== undefined && link.mtu !== orig.mtu) {
      await this.#do(
        "restore MTU",
        String(orig.mtu),
        name,
        () => this.#backend.setLinkMtu(name, orig.mtu!),
      );
    }
    if (orig.up !== undefined && link.up !== orig.up) {
      await this.#do(
        orig.up ? "bring up" : "bring down",
        name,
        name,
        () => this.#backend.setLinkUp(name, orig.up!),
      );
    }
  }

  async #do(action: string, object: string, link: string, f: () => Promise<void>) {
    try {
      await f();
    } catch (e) {
      if (hasErrno(e, "ENODEV")) return; // gone meanwhile; its LinkStatus event re-runs us
      throw new NetworkApplyError(action, object, link, { cause: e });
    }
  }
}

/**
 * Pure: the per-link settings for SLAAC on or off. accept_ra is 2, not 1, so
 * that router advertisements still count when forwarding is on (a node that
 * routes for containers); autoconf makes addresses from their prefixes.
 */
export function slaacSettings(slaac: boolean): [Ipv6ConfKey, number][] {
  return slaac ? [["accept_ra", 2], ["autoconf", 1]] : [["accept_ra", 0], ["autoconf", 0]];
}
