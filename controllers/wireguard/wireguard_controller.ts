/**
 * WireguardController: sets each configured WireGuard interface's private
 * key, listen port and peers (`machine.network.wireguard`) through the
 * WireGuard backend once its link exists (network.LinkSpecController creates
 * it), re-applies when the device drifts from them, and publishes a
 * WireguardStatus per interface from the device's own report, re-read every
 * `resyncInterval` for handshakes and traffic. The keys come from the config
 * in force (`secrets`), never from the store, whose MachineConfig is
 * redacted. Inputs: MachineConfig, LinkStatus. Output: WireguardStatus.
 * @module
 */
import {
  LINK_STATUS,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineController,
  type ResourceSpecs,
  WIREGUARD_STATUS,
  type WireguardStatusSpec,
} from "../../resources/mod.ts";
import { configSha256, type MachineConfig, type WireguardConfig } from "../../config/mod.ts";
import {
  configText,
  publicKeyOf,
  type WireguardBackend,
  type WireguardDeviceSettings,
  type WireguardDeviceState,
} from "../../platform/wireguard/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";

/** How often handshakes and traffic are re-read, and drift checked: 10 s (one `wg show`). */
export const WIREGUARD_RESYNC_MS = 10_000;
/** How soon to look again while the config in force lags the store's. */
const SECRETS_LAG_MS = 50;

/** Dependencies of {@link WireguardController}. */
export interface WireguardDeps {
  backend: WireguardBackend;
  /** The config in force with its secrets (ConfigKeeper.config); undefined before one is. */
  secrets: () => MachineConfig | undefined;
  /** @default WIREGUARD_RESYNC_MS */
  resyncInterval?: number;
}

type Ctx = ReconcileContext<ResourceSpecs>;

/** Applies WireGuard keys and peers, and reports them. */
export class WireguardController implements MachineController {
  readonly name = "wireguard.WireguardController";
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
    { type: LINK_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [{ type: WIREGUARD_STATUS, kind: "exclusive" }] as const;
  readonly resyncInterval: number;
  readonly #deps: WireguardDeps;
  /** Per interface: the hash of the settings last applied. */
  readonly #applied = new Map<string, string>();
  /** Per interface: how often it was re-applied because it drifted. */
  readonly #reapplies = new Map<string, number>();

  constructor(deps: WireguardDeps) {
    this.#deps = deps;
    this.resyncInterval = deps.resyncInterval ?? WIREGUARD_RESYNC_MS;
  }

  async reconcile(ctx: Ctx): Promise<void> {
    const stored = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec;
    const config = this.#deps.secrets();
    if (stored?.sha256 && config && configSha256(config) !== stored.sha256) {
      // The store took a new config a moment before the keeper: wait for its keys.
      for (const r of ctx.list(WIREGUARD_STATUS)) ctx.keep(pointer(r.spec.name));
      ctx.requeueAfter(SECRETS_LAG_MS);
      return;
    }
    const wanted = stored ? config?.machine.network.wireguard ?? [] : [];
    const links = new Set(ctx.list(LINK_STATUS).map((l) => l.spec.name));
    for (const name of [...this.#applied.keys(), ...this.#reapplies.keys()]) {
      if (wanted.some((w) => w.name === name)) continue;
      this.#applied.delete(name);
      this.#reapplies.delete(name);
    }
    let failure: unknown;
    for (const wg of wanted) {
      try {
        await this.#sync(ctx, wg, links.has(wg.name));
      } catch (e) {
        failure ??= e;
        await ctx.apply(pointer(wg.name), (cur) => ({
          ...(cur ?? emptyStatus(wg.name)),
          configured: false,
          error: e instanceof Error ? e.message : String(e),
        }));
      }
    }
    if (failure) throw failure;
  }

  async #sync(ctx: Ctx, wg: WireguardConfig, linkExists: boolean): Promise<void> {
    if (!linkExists) {
      this.#applied.delete(wg.name);
      await ctx.apply(pointer(wg.name), {
        ...emptyStatus(wg.name),
        error: `link "${wg.name}" does not exist yet`,
      });
      return;
    }
    const settings = deviceSettings(wg);
    const hash = configSha256(configText(settings));
    let state = await this.#deps.backend.show(wg.name);
    const drifted = state !== undefined && this.#applied.get(wg.name) === hash &&
      !(await inForce(state, settings));
    const reapplies = (this.#reapplies.get(wg.name) ?? 0) + (drifted ? 1 : 0);
    this.#reapplies.set(wg.name, reapplies);
    if (drifted) {
      ctx.log("WireGuard device drifted from its config; re-applying", { link: wg.name });
    }
    if (state === undefined || this.#applied.get(wg.name) !== hash || drifted) {
      this.#applied.delete(wg.name);
      await this.#deps.backend.configure(wg.name, settings);
      this.#applied.set(wg.name, hash);
      ctx.log("WireGuard device configured", { link: wg.name, peers: settings.peers.length });
      state = await this.#deps.backend.show(wg.name);
    }
    await ctx.apply(pointer(wg.name), {
      ...wireguardStatus(wg.name, state, true),
      driftReapplies: reapplies,
    });
  }
}

/** A {@link WireguardController} over `deps`. */
export function wireguardController(deps: WireguardDeps): WireguardController {
  return new WireguardController(deps);
}

function pointer(id: string) {
  return { type: WIREGUARD_STATUS, namespace: "network", id } as const;
}

function emptyStatus(name: string): WireguardStatusSpec {
  return {
    name,
    publicKey: "",
    listenPort: 0,
    configured: false,
    peers: [],
    error: "",
    driftReapplies: 0,
  };
}

/** The backend settings of a configured interface. Pure. */
export function deviceSettings(wg: WireguardConfig): WireguardDeviceSettings {
  return {
    privateKey: wg.private_key,
    ...(wg.listen_port === undefined ? {} : { listenPort: wg.listen_port }),
    peers: wg.peers.map((p) => ({
      publicKey: p.public_key,
      ...(p.preshared_key === undefined ? {} : { presharedKey: p.preshared_key }),
      ...(p.endpoint === undefined ? {} : { endpoint: p.endpoint }),
      allowedIps: p.allowed_ips,
      ...(p.persistent_keepalive === undefined
        ? {}
        : { persistentKeepalive: p.persistent_keepalive }),
    })),
  };
}

/** Whether the device still has the key, port and peers applied (endpoints roam: not compared). */
export async function inForce(
  state: WireguardDeviceState,
  s: WireguardDeviceSettings,
): Promise<boolean> {
  if (state.publicKey !== await publicKeyOf(s.privateKey).catch(() => "")) return false;
  if (s.listenPort !== undefined && state.listenPort !== s.listenPort) return false;
  const have = state.peers.map((p) => p.publicKey).sort().join(",");
  return have === s.peers.map((p) => p.publicKey).sort().join(",");
}

/** The status of a device as the backend reported it (undefined: absent). Pure. */
export function wireguardStatus(
  name: string,
  state: WireguardDeviceState | undefined,
  configured: boolean,
): WireguardStatusSpec {
  if (!state) return { ...emptyStatus(name), error: `no WireGuard device "${name}"` };
  return {
    name,
    publicKey: state.publicKey,
    listenPort: state.listenPort,
    configured,
    peers: state.peers.map((p) => ({
      publicKey: p.publicKey,
      ...(p.endpoint === undefined ? {} : { endpoint: p.endpoint }),
      allowedIps: [...p.allowedIps],
      ...(p.lastHandshake > 0
        ? { lastHandshake: new Date(p.lastHandshake * 1000).toISOString() }
        : {}),
      rxBytes: p.rxBytes,
      txBytes: p.txBytes,
      ...(p.persistentKeepalive === undefined
        ? {}
        : { persistentKeepalive: p.persistentKeepalive }),
    })),
    error: "",
    driftReapplies: 0,
  };
}
