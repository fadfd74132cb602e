/**
 * LinkSpecController: makes each link's admin state and MTU match its
 * LinkSpec. It remembers what each link was like before it first changed it,
 * and on teardown puts back only what it changed. Inputs: LinkSpec (strong,
 * with a finalizer), LinkStatus (so a hotplugged link is configured when it
 * appears). No outputs: LinkStatus shows the result.
 * @module
 */
import type { MachineController, MachineResourceOf, ResourceSpecs } from "../../resources/mod.ts";
import { LINK_SPEC, LINK_STATUS, type LinkSpecSpec } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { LinkInfo, NetworkBackend } from "../../platform/network/mod.ts";
import { hasErrno, NetworkApplyError } from "./apply_error.ts";

/** A link's state before machined first changed it. */
interface Original {
  up?: boolean;
  mtu?: number;
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
    const links = new Map((await this.#backend.listLinks()).map((l) => [l.name, l]));
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
  }

  async #apply(r: MachineResourceOf<typeof LINK_SPEC>, link: LinkInfo): Promise<void> {
    const spec: LinkSpecSpec = r.spec;
    const orig = this.#original.get(spec.name) ?? {};
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
    this.#original.set(spec.name, orig);
  }

  /** Undo what this controller changed on `name`, then forget it. */
  async #restore(name: string, link: LinkInfo | undefined): Promise<void> {
    const orig = this.#original.get(name);
    this.#original.delete(name);
    if (!orig || !link) return;
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
