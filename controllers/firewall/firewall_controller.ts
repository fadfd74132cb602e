/**
 * FirewallController: owns nftables table `inet machined`. From MachineConfig's
 * `network.firewall` it compiles one transaction and applies it when the intent changes; every
 * `resyncInterval` it reads the table back (`nft -j list table`, canonical form) and re-applies
 * when something else changed or deleted it. Without a firewall in the config it removes the
 * table. Inputs: MachineConfig. Outputs: FirewallStatus.
 * @module
 */
import {
  FIREWALL_STATUS,
  FIREWALL_STATUS_ID,
  type FirewallStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineController,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import type { FirewallBackend } from "../../platform/firewall/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { compileFirewall, FIREWALL_TABLE } from "./compile.ts";
import { type FirewallIntent, firewallIntent } from "./intent.ts";

/** How often the table is read back to catch drift: 10 s (one `nft -j list`, a few ms). */
export const FIREWALL_RESYNC_MS = 10_000;

/** Dependencies of {@link FirewallController}. */
export interface FirewallDeps {
  backend: FirewallBackend;
  /** Drift check period (ms). @default FIREWALL_RESYNC_MS */
  resyncInterval?: number;
  /**
   * Whether a machined table may already be in the kernel when the controller starts. On a
   * node it cannot (machined is PID 1 on a fresh kernel), so a node without a firewall never
   * runs nft at all: not even where nf_tables is missing (the Pi's image, a kernel without it),
   * which would otherwise fail the controller on every node that asked for no firewall.
   * @default false
   */
  tableMayExist?: boolean;
}

/** What the controller last put in force. */
interface Applied {
  hash: string;
  /** The table's canonical form read back right after applying. */
  canonical: string | undefined;
}

/** Applies the firewall and keeps it applied. */
export class FirewallController implements MachineController {
  readonly name = "firewall.FirewallController";
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
  ] as const;
  readonly outputs = [{ type: FIREWALL_STATUS, kind: "exclusive" }] as const;
  readonly resyncInterval: number;
  readonly #backend: FirewallBackend;
  #applied: Applied | undefined;
  /** The table was removed (or never made) and no firewall is configured. */
  #removed: boolean;
  #reapplies = 0;

  constructor(deps: FirewallDeps) {
    this.#backend = deps.backend;
    this.resyncInterval = deps.resyncInterval ?? FIREWALL_RESYNC_MS;
    this.#removed = !(deps.tableMayExist ?? false);
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const intent = firewallIntent(
      ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config,
    );
    try {
      const inForce = intent ? await this.#enforce(intent, ctx) : await this.#disable();
      await this.#publish(ctx, intent, inForce, "");
    } catch (e) {
      await this.#publish(ctx, intent, false, e instanceof Error ? e.message : String(e));
      throw e;
    }
  }

  /** Applies `intent` if it changed or the table drifted; returns whether it is in force. */
  async #enforce(intent: FirewallIntent, ctx: ReconcileContext<ResourceSpecs>): Promise<boolean> {
    this.#removed = false;
    const text = compileFirewall(intent);
    const hash = await sha256Hex(text);
    if (this.#applied?.hash === hash) {
      const now = await this.#backend.read(FIREWALL_TABLE);
      if (now === this.#applied.canonical) return true;
      this.#reapplies++;
      ctx.log(
        now === undefined
          ? "firewall table deleted; re-applying"
          : "firewall table changed; re-applying",
        {
          reapplies: this.#reapplies,
        },
      );
    }
    this.#applied = undefined;
    await this.#backend.apply(text);
    this.#applied = { hash, canonical: await this.#backend.read(FIREWALL_TABLE) };
    ctx.log("firewall applied", { hash, default: intent.default, rules: intent.rules.length });
    return true;
  }

  async #disable(): Promise<boolean> {
    this.#applied = undefined;
    if (!this.#removed) {
      await this.#backend.remove(FIREWALL_TABLE);
      this.#removed = true;
    }
    return false;
  }

  async #publish(
    ctx: ReconcileContext<ResourceSpecs>,
    intent: FirewallIntent | undefined,
    inForce: boolean,
    error: string,
  ): Promise<void> {
    await ctx.apply(
      { type: FIREWALL_STATUS, namespace: "network", id: FIREWALL_STATUS_ID },
      firewallStatus(intent, {
        appliedHash: this.#applied?.hash ?? "",
        inForce,
        driftReapplies: this.#reapplies,
        error,
      }),
    );
  }
}

/** A {@link FirewallController} over `deps`. */
export function firewallController(deps: FirewallDeps): FirewallController {
  return new FirewallController(deps);
}

/** The status of `intent` (undefined: no firewall) with what the controller observed. Pure. */
export function firewallStatus(
  intent: FirewallIntent | undefined,
  observed: Pick<FirewallStatusSpec, "appliedHash" | "inForce" | "driftReapplies" | "error">,
): FirewallStatusSpec {
  return {
    enabled: intent !== undefined,
    defaultAction: intent?.default ?? "accept",
    rules: (intent?.rules ?? []).map((r) => ({ ...r })),
    adminSubnets: [...(intent?.adminSubnets ?? [])],
    apiPort: intent?.apiPort ?? 0,
    ...observed,
  };
}

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
