/**
 * AddressSpecController: adds each AddressSpec's address to its link, and on
 * teardown deletes it again, but only if this controller added it: an
 * address that was already there (EEXIST or found present) is never removed.
 * Inputs: AddressSpec (strong, with a finalizer), LinkStatus and
 * AddressStatus (a link that appears, or an address someone removed, re-runs
 * it). No outputs: AddressStatus shows the result.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import {
  ADDRESS_SPEC,
  ADDRESS_STATUS,
  type AddressSpecSpec,
  LINK_STATUS,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type {
  AddressInfo,
  AddressSpec as BackendAddress,
  LinkInfo,
  NetworkBackend,
} from "../../platform/network/mod.ts";
import { hasErrno, NetworkApplyError } from "./apply_error.ts";

/** Applies AddressSpecs through the network backend. */
export class AddressSpecController implements MachineController {
  readonly name = "network.AddressSpecController";
  readonly inputs = [
    { type: ADDRESS_SPEC, kind: "strong" },
    { type: LINK_STATUS, kind: "weak" },
    { type: ADDRESS_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [] as const;
  readonly #backend: NetworkBackend;
  /** Ids of AddressSpecs whose address this controller added (and so may delete). */
  readonly #added = new Set<string>();

  constructor(deps: { backend: NetworkBackend }) {
    this.#backend = deps.backend;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const links = new Map((await this.#backend.listLinks()).map((l) => [l.name, l]));
    const present = await this.#backend.listAddresses();
    for (const r of ctx.list(ADDRESS_SPEC)) {
      const id = r.metadata.id;
      if (r.metadata.phase === "tearingDown") {
        if (this.#added.delete(id)) await this.#delete(r.spec);
        ctx.removeFinalizer(r.metadata);
        continue;
      }
      ctx.addFinalizer(r.metadata);
      const link = links.get(r.spec.link);
      if (!link || isPresent(r.spec, link, present)) continue;
      if (await this.#add(r.spec)) this.#added.add(id);
    }
  }

  /** True when this call added the address. */
  async #add(spec: AddressSpecSpec): Promise<boolean> {
    try {
      await this.#backend.addAddress(backendAddress(spec));
      return true;
    } catch (e) {
      if (hasErrno(e, "EEXIST", "ENODEV")) return false;
      throw new NetworkApplyError("add address", cidr(spec), spec.link, { cause: e });
    }
  }

  async #delete(spec: AddressSpecSpec): Promise<void> {
    try {
      await this.#backend.deleteAddress(backendAddress(spec));
    } catch (e) {
      if (hasErrno(e, "EADDRNOTAVAIL", "ENODEV")) return; // already gone
      throw new NetworkApplyError("delete address", cidr(spec), spec.link, { cause: e });
    }
  }
}

/** Pure: is the address already on the link? */
export function isPresent(
  spec: AddressSpecSpec,
  link: LinkInfo,
  present: readonly AddressInfo[],
): boolean {
  return present.some((a) =>
    a.index === link.index && a.family === spec.family && a.address === spec.address &&
    a.prefixLen === spec.prefixLen
  );
}

/** Pure: the backend request for a spec. */
export function backendAddress(spec: AddressSpecSpec): BackendAddress {
  return { link: spec.link, address: spec.address, prefixLen: spec.prefixLen };
}

function cidr(spec: AddressSpecSpec): string {
  return `${spec.address}/${spec.prefixLen}`;
}
