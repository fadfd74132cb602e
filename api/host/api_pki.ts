/**
 * The API's PKI on a running node, owned by machined (which alone holds the CA
 * key): chooses the CA (api/host/ca_source.ts), keeps machined's PKI directory
 * (0700 root), hands apid only the CA certificate and its server pair
 * (api/host/apid_pki.ts), starts the API once there is a CA, and re-issues the
 * server certificate whenever the names it must carry change (hostname,
 * `machine.api.cert_sans`, the node's addresses from AddressStatus; a DHCP
 * lease arriving after boot is the common case) or the CA changes, restarting
 * apid with the new pair. apid's ca.crt holds the CA certificate and the
 * config's `machine.ca.accepted` (a CA rotation); a change of those alone
 * rewrites it and restarts apid too. Changes are throttled: the first at once, a burst once. Without any CA the API does
 * not start and MachineStatus says why (condition `api`).
 *
 * @module
 */
import { join } from "node:path";
import { prepareApidPki } from "./apid_pki.ts";
import {
  type CertificateAuthority,
  createServerCertRenewer,
  type KeyedCertificate,
  loadOrCreateNodePki,
  type NodePki,
  pathExists,
  PKI_FILES,
  type RenewerClock,
  renewServerCertificate,
  type ServerCertRenewer,
  type ServerNames,
} from "../../pki/mod.ts";
import { ADDRESS_STATUS } from "../../resources/mod.ts";
import {
  certificateNamesExactly,
  certificateSanList,
  sanList,
  wantedServerNames,
} from "./api_server_names.ts";
import {
  type CaPem,
  caSectionOf,
  type CaSourceKind,
  chooseCaSource,
  describeCaSource,
} from "./ca_source.ts";
import type { ConfigKeeper } from "../../config/keeper/mod.ts";
import type { Machined } from "../../core/mod.ts";
import { enterMaintenance, type MaintenanceApi } from "./maintenance_api.ts";
import type { NodeMaintenanceGate } from "./maintenance_gate.ts";

import { API_CONDITION } from "./api_condition.ts";
import { ChangeThrottle } from "./change_throttle.ts";

export { API_CONDITION };

/** What {@link startNodeApiPki} needs of the API it starts. */
export interface ApiHandle {
  /** Restart apid so it loads the pair just written to its directory. */
  restartApid(): Promise<void>;
}

/** Options of {@link startNodeApiPki}. */
export interface NodeApiPkiOptions {
  machined: Machined;
  keeper: ConfigKeeper;
  /** machined's PKI directory (holds the CA key; 0700). */
  pkiDir: string;
  /** apid's PKI directory (CA certificate and server pair only). */
  apidPkiDir: string;
  /** The CA the image carries, when it does. */
  imageCa?: CaPem;
  /** The certificate's CN while no valid config names the host. */
  fallbackHostname: string;
  /** Starts the API the first time there is a CA; `pki.ca` always reads the CA in use. */
  startApi(pki: NodePki): Promise<ApiHandle>;
  /**
   * At most one re-evaluation per this window: the first change after a quiet spell is acted
   * on at once, a burst after it once at the window's end (api/host/change_throttle.ts), so a
   * burst costs at most two restarts and the DHCP address is never kept waiting. @default 1000
   */
  debounceMs?: number;
  /** The renewer's clock (expiry). @default the system clock */
  clock?: RenewerClock;
  /**
   * Maintenance mode: with no CA anywhere the API starts with a self-signed
   * certificate (api/host/maintenance_api.ts) and this gate is opened. Without a
   * gate, no CA means no API (the `api` condition).
   */
  gate?: NodeMaintenanceGate;
  /** Prints the maintenance certificate's fingerprint (console, kernel log). */
  announce?: (fingerprint: string) => void;
}

/** The running PKI owner. */
export interface NodeApiPki {
  /** Where the CA in use came from. */
  readonly caSource: CaSourceKind;
  /** The server certificate apid serves, once there is one. */
  readonly server: KeyedCertificate | undefined;
  /**
   * The names ("dns:…", "ip:…") of the server certificate apid was last told
   * to serve: set once the API was started with it or apid was signalled to
   * reload it, so a client that needs them (the readiness probe) does not
   * dial ahead of the edge. The names it was issued for, so nobody parses
   * the certificate again for them (a SAN parse is ~0.1 s under TCG).
   */
  readonly servedNames: readonly string[] | undefined;
  /** Whether the API was started. */
  readonly apiStarted: boolean;
  /** The maintenance certificate's fingerprint while the API serves maintenance mode. */
  readonly fingerprint: string | undefined;
  /** Re-evaluate now (skipping the debounce); resolves when done. */
  reconcileNow(): Promise<void>;
  /** Stops following changes and the renewer (not the API); resolves once an evaluation in flight ends. */
  stop(): Promise<void>;
}

/**
 * Chooses the CA, prepares both PKI directories and starts the API when a CA
 * exists (the first evaluation is awaited), then follows config and address
 * changes. Never throws for a bad CA: the reason goes to MachineStatus.
 */
export async function startNodeApiPki(o: NodeApiPkiOptions): Promise<NodeApiPki> {
  const owner = new NodeApiPkiOwner(o);
  await owner.start();
  return owner;
}

/** What a reconcile settled on: the CA source to use, and the CA when there is one. */
type CaChoice = ReturnType<typeof chooseCaSource>;

/**
 * The PKI owner behind {@link startNodeApiPki}. Every change of state runs in
 * one queue (`enqueue`), so reconciles, renewals and restarts never interleave.
 */
export class NodeApiPkiOwner implements NodeApiPki {
  #ca: CertificateAuthority | undefined;
  #caSource: CaSourceKind = "none";
  #server: KeyedCertificate | undefined;
  #servedNames: readonly string[] | undefined;
  /** The client trust apid was last given: the CA certificate, then `machine.ca.accepted`. */
  #trust = "";
  #api: ApiHandle | undefined;
  #renewer: ServerCertRenewer | undefined;
  #chain: Promise<void> = Promise.resolve();
  readonly #throttle: ChangeThrottle;
  #stopped = false;
  #maintenance: MaintenanceApi | undefined;
  #unsubscribe: () => void = () => {};
  readonly #abort = new AbortController();
  /** The CA in use, read through at each access (it changes when the config's CA does). */
  readonly #caView: CertificateAuthority;

  constructor(private readonly o: NodeApiPkiOptions) {
    this.#throttle = new ChangeThrottle(() => void this.reconcileNow(), o.debounceMs ?? 1000);
    const ca = () => this.#ca!;
    this.#caView = {
      get cert() {
        return ca().cert;
      },
      get certPem() {
        return ca().certPem;
      },
      get key() {
        return ca().key;
      },
      get keyPem() {
        return ca().keyPem;
      },
    };
  }

  get caSource(): CaSourceKind {
    return this.#caSource;
  }
  get server(): KeyedCertificate | undefined {
    return this.#server;
  }
  get servedNames(): readonly string[] | undefined {
    return this.#servedNames;
  }
  get apiStarted(): boolean {
    return this.#api !== undefined;
  }
  get fingerprint(): string | undefined {
    return this.#maintenance?.fingerprint;
  }

  /** The first evaluation (awaited), then following config and address changes. */
  async start(): Promise<void> {
    await this.reconcileNow();
    this.#unsubscribe = this.o.keeper.onChange(() => this.#schedule());
    this.#watchAddresses().catch((e) => {
      if (!this.#abort.signal.aborted) {
        this.o.machined.logger.error("pki", "address watch ended", { error: e });
      }
    });
  }

  reconcileNow(): Promise<void> {
    return this.#enqueue(() => this.#reconcile());
  }

  stop(): Promise<void> {
    this.#stopped = true;
    this.#throttle.stop();
    this.#unsubscribe();
    this.#abort.abort();
    this.#renewer?.stop();
    return this.#chain;
  }

  /**
   * Schedules a reconcile when the addresses change the names the certificate
   * should carry, and only then: the watch's first snapshot, loopback and
   * link-local addresses would otherwise spend the throttle's one immediate act
   * and keep the DHCP address that follows waiting out the window (issue 27).
   */
  async #watchAddresses(): Promise<void> {
    const watch = this.o.machined.store.watch(ADDRESS_STATUS, { signal: this.#abort.signal });
    let last = this.#server ? certificateSanList(this.#server.cert).join(",") : "";
    for await (const _ of watch) {
      const names = sanList(this.#names()).join(",");
      if (names === last) continue;
      last = names;
      this.#schedule();
    }
  }

  #enqueue(job: () => Promise<void>): Promise<void> {
    const next = this.#chain.then(job).catch((e) => {
      this.o.machined.logger.error("pki", "API PKI update failed", { error: e });
    });
    this.#chain = next;
    return next;
  }

  #schedule(): void {
    if (!this.#stopped) this.#throttle.changed();
  }

  #names(): ServerNames {
    const { keeper, machined } = this.o;
    return wantedServerNames({
      hostname: keeper.config?.machine.hostname ?? this.o.fallbackHostname,
      certSans: keeper.config?.machine.api?.cert_sans ?? [],
      addresses: machined.store.list(ADDRESS_STATUS).map((r) => r.spec),
    });
  }

  #chooseCa(): CaChoice {
    const { keeper } = this.o;
    return chooseCaSource({
      config: keeper.config?.machine.ca
        ? { certPem: keeper.config.machine.ca.crt, keyPem: keeper.config.machine.ca.key }
        : undefined,
      state: keeper.stateText === undefined ? undefined : caSectionOf(keeper.stateText),
      badConfig: keeper.rejectedText === undefined ? undefined : caSectionOf(keeper.rejectedText),
      image: this.o.imageCa,
    });
  }

  async #reconcile(): Promise<void> {
    if (this.#stopped) return;
    const choice = this.#chooseCa();
    if (choice.source === "none") return await this.#withoutCa();
    const wanted = this.#names();
    const ca = this.#ca;
    if (!ca || ca.certPem.trim() !== choice.ca.certPem.trim()) {
      return await this.#adoptCa(choice, wanted);
    }
    this.#caSource = choice.source;
    if (this.#server && !certificateNamesExactly(this.#server.cert, wanted)) {
      const next = await renewServerCertificate({ ca, ...wanted, dir: this.o.pkiDir });
      await this.#install(next, wanted, "certificateReissued");
    } else if (this.#server && !this.#api) {
      await this.#install(this.#server, wanted, "certificateIssued"); // an earlier start failed
    } else if (this.#server && this.#trustPem() !== this.#trust) {
      await this.#install(this.#server, wanted, "acceptedCasChanged");
    }
  }

  /**
   * The CAs apid trusts for client certificates, as one PEM bundle: the CA in
   * use first, then the config's `machine.ca.accepted` (a CA rotation,
   * docs/api.md, "Rotating the CA"), each once. Only a config in force adds accepted CAs.
   */
  #trustPem(): string {
    const own = this.#ca!.certPem;
    const accepted = this.#caSource === "config"
      ? (this.o.keeper.config?.machine.ca?.accepted ?? []).map((p) => p.trim())
      : [];
    const extra = [...new Set(accepted)].filter((p) => p !== own.trim());
    // Without a rotation, ca.crt is the CA certificate exactly as before.
    return extra.length === 0 ? own : [own.trim(), ...extra].join("\n") + "\n";
  }

  /** No CA anywhere: maintenance mode when there is a gate, else the `api` condition. */
  async #withoutCa(): Promise<void> {
    const o = this.o;
    if (!this.#ca && o.gate && !this.#maintenance) {
      this.#maintenance = await enterMaintenance(o, this.#names(), (pki) => o.startApi(pki));
      this.#api = this.#maintenance.api;
      return;
    }
    if (!this.#ca && !o.gate) {
      this.#refuse(
        `${describeCaSource("none")} (give the node a config or an image with machine.ca)`,
      );
    }
    // A CA in use stays in use: nothing better is known.
  }

  /** A CA appeared or changed: load or create the node PKI with it and install its server pair. */
  async #adoptCa(choice: Exclude<CaChoice, { source: "none" }>, wanted: ServerNames) {
    const pki = await this.#loadPki(choice, wanted);
    if (!pki) return;
    const changed = this.#ca !== undefined;
    const ca = this.#ca = pki.ca;
    this.#caSource = choice.source;
    this.o.machined.conditions.set(API_CONDITION, undefined);
    let next = pki.server;
    if (!certificateNamesExactly(next.cert, wanted)) {
      next = await renewServerCertificate({ ca, ...wanted, dir: this.o.pkiDir });
    }
    const why = changed
      ? "caChanged"
      : this.#maintenance
      ? "maintenanceEnded"
      : "certificateIssued";
    await this.#install(next, wanted, why);
    if (this.#maintenance && this.o.gate) this.o.gate.serving = false;
    this.#maintenance = undefined;
  }

  /** The node PKI for `choice`, or undefined (reported) when it cannot be used. */
  async #loadPki(
    choice: Exclude<CaChoice, { source: "none" }>,
    wanted: ServerNames,
  ): Promise<NodePki | undefined> {
    const o = this.o;
    try {
      // Only machined may enter the directory that holds the CA key.
      await Deno.mkdir(o.pkiDir, { recursive: true, mode: 0o700 });
      await Deno.chmod(o.pkiDir, 0o700);
      return await loadOrCreateNodePki(o.pkiDir, { ...wanted, ca: choice.ca });
    } catch (e) {
      const reason = `cannot use ${describeCaSource(choice.source)}: ${(e as Error).message}`;
      if (this.#maintenance) o.gate?.reopen(); // still no CA anyone holds: let another config in
      if (!this.#ca && !this.#maintenance) this.#refuse(reason);
      else o.machined.logger.error("pki", reason, { error: e });
      return undefined;
    }
  }

  /** Serves `next`: writes apid's pair, renews it from now on, and starts or restarts the API. */
  async #install(next: KeyedCertificate, wanted: ServerNames, why: string): Promise<void> {
    const { machined } = this.o;
    this.#server = next;
    this.#trust = this.#trustPem();
    await prepareApidPki({ ca: { certPem: this.#trust }, server: next }, this.o.apidPkiDir);
    this.#startRenewer(next, wanted);
    const sans = sanList(wanted);
    if (!this.#api) return await this.#startApi(next, sans);
    await this.#api.restartApid();
    this.#servedNames = sans;
    machined.events.emit("api", "apid", why, `${why}: ${sans.join(", ")}; apid restarted`, {
      sans: sans.join(","),
      caSource: this.#caSource,
    });
  }

  async #startApi(server: KeyedCertificate, sans: string[]): Promise<void> {
    const { machined } = this.o;
    try {
      this.#api = await this.o.startApi({
        dir: this.o.pkiDir,
        ca: this.#caView,
        server,
        written: [],
      });
      this.#servedNames = sans;
    } catch (e) {
      this.#refuse(`it failed to start: ${(e as Error).message}`); // retried on the next change
      throw e;
    }
    machined.conditions.set(API_CONDITION, undefined);
    machined.logger.info("pki", `API started with ${describeCaSource(this.#caSource)}`, {
      sans: sans.join(","),
    });
  }

  #startRenewer(current: KeyedCertificate, wanted: ServerNames): void {
    const { machined } = this.o;
    this.#renewer?.stop();
    const mine: ServerCertRenewer = this.#renewer = createServerCertRenewer({
      ca: this.#ca!,
      current,
      ...wanted,
      dir: this.o.pkiDir,
      clock: this.o.clock,
      onRenewed: (renewed) =>
        this.#enqueue(async () => {
          if (this.#renewer !== mine || this.#stopped) return; // superseded by a re-issue
          await this.#renewed(renewed);
        }),
      onError: (e) =>
        machined.logger.error("pki", "server certificate renewal failed", { error: e }),
    });
  }

  async #renewed(renewed: KeyedCertificate): Promise<void> {
    this.#server = renewed;
    await prepareApidPki({ ca: { certPem: this.#trust }, server: renewed }, this.o.apidPkiDir);
    await this.#api?.restartApid();
    this.o.machined.events.emit(
      "api",
      "apid",
      "certificateRenewed",
      "server certificate renewed; apid restarted",
    );
  }

  /** The API cannot start: say so in MachineStatus, and once in the log. */
  #refuse(reason: string): void {
    const { machined } = this.o;
    const text = `the API is not started: ${reason}`;
    if (machined.conditions.list().some((c) => c.name === API_CONDITION && c.reason === text)) {
      return;
    }
    machined.conditions.set(API_CONDITION, text);
    machined.logger.warn("pki", text);
  }
}

/**
 * The CA an image carries in `dir` (ca.crt and ca.key), or undefined when it
 * carries none or it cannot be read (reported to `onError`): boot goes on, and
 * the next source in the order is used.
 */
export async function readImageCa(
  dir: string,
  onError: (error: unknown) => void = () => {},
): Promise<CaPem | undefined> {
  try {
    if (!(await pathExists(join(dir, PKI_FILES.caKey)))) return undefined;
    return {
      certPem: await Deno.readTextFile(join(dir, PKI_FILES.caCert)),
      keyPem: await Deno.readTextFile(join(dir, PKI_FILES.caKey)),
    };
  } catch (e) {
    onError(e);
    return undefined;
  }
}
