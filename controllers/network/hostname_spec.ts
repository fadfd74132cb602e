/**
 * HostnameSpecController: sets the kernel hostname and domain name from the
 * HostnameSpec through the identity backend, then publishes what the kernel
 * reports as HostnameStatus (also when there is no spec). Input: HostnameSpec.
 * Output: HostnameStatus.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import {
  HOSTNAME_ID,
  HOSTNAME_SPEC,
  HOSTNAME_STATUS,
  type HostnameStatusSpec,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { IdentityBackend } from "../../platform/identity/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import { NetworkApplyError } from "./apply_error.ts";
import { NETWORK_NAMESPACE } from "./spec_transform.ts";

/** Applies the HostnameSpec. */
export class HostnameSpecController implements MachineController {
  readonly name = "network.HostnameSpecController";
  readonly inputs = [{ type: HOSTNAME_SPEC, kind: "weak" }] as const;
  readonly outputs = [{ type: HOSTNAME_STATUS, kind: "exclusive" }] as const;
  readonly #identity: IdentityBackend;
  readonly #events?: EventBus;

  constructor(deps: { identity: IdentityBackend; events?: EventBus }) {
    this.#identity = deps.identity;
    this.#events = deps.events;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const spec = ctx.find(HOSTNAME_SPEC, NETWORK_NAMESPACE, HOSTNAME_ID)?.spec;
    if (spec) {
      if ((await this.#identity.hostname()) !== spec.hostname) {
        await this.#set(
          "set hostname",
          spec.hostname,
          () => this.#identity.setHostname(spec.hostname),
        );
        this.#events?.emit("network", "hostname", "set", `hostname is now ${spec.hostname}`);
      }
      if (domainOf(await this.#identity.domainname()) !== spec.domainname) {
        await this.#set(
          "set domain name",
          spec.domainname,
          () => this.#identity.setDomainname(spec.domainname),
        );
      }
    }
    await ctx.apply(
      { type: HOSTNAME_STATUS, namespace: NETWORK_NAMESPACE, id: HOSTNAME_ID },
      hostnameStatus(await this.#identity.hostname(), await this.#identity.domainname()),
    );
  }

  async #set(action: string, value: string, f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (e) {
      throw new NetworkApplyError(action, value, "-", { cause: e });
    }
  }
}

/** The kernel reports an unset NIS domain as `(none)`. */
function domainOf(kernel: string): string {
  return kernel === "(none)" ? "" : kernel;
}

/** Pure: the status for the kernel's names. */
export function hostnameStatus(hostname: string, domainname: string): HostnameStatusSpec {
  const domain = domainOf(domainname);
  return { hostname, domainname: domain, fqdn: domain ? `${hostname}.${domain}` : hostname };
}
