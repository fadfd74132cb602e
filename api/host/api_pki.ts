/**
 * The API's PKI on a running node, owned by machined (which alone holds the CA
 * key): chooses the CA (api/host/ca_source.ts), keeps machined's PKI directory
 * (0700 root), hands apid only the CA certificate and its server pair
 * (api/host/apid_pki.ts), starts the API once there is a CA, and re-issues the
 * server certificate whenever the names it must carry change (hostname,
 * `machine.api.cert_sans`, the node's addresses from AddressStatus; a DHCP
 * lease arriving after boot is the common case) or the CA changes, restarting
 * apid with the new pair. Changes are debounced. Without any CA the API does
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
import { certificateNamesExactly, sanList, wantedServerNames } from "./api_server_names.ts";
import {
  type CaPem,
  caSectionOf,
  type CaSourceKind,
  chooseCaSource,
  describeCaSource,
} from "./ca_source.ts";
import type { ConfigKeeper } from "../../config/keeper/mod.ts";
import type { Machined } from "../../node/machined.ts";
import { enterMaintenance, type MaintenanceApi } from "./maintenance_api.ts";
import type { NodeMaintenanceGate } from "./maintenance_gate.ts";

import { API_CONDITION } from "./api_condition.ts";

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
  /** Wait after a change before re-issuing, so a burst costs one restart. @default 1000 */
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
  /** Whether the API was started. */
  readonly apiStarted: boolean;
  /** The maintenance certificate's fingerprint while the API serves maintenance mode. */
  readonly fingerprint: string | undefined;
  /** Re-evaluate now (skipping the debounce); resolves when done. */
  reconcileNow(): Promise<void>;
  /** Stops following changes and the renewer (not the API). */
  stop(): void;
}

/**
 * Chooses the CA, prepares both PKI directories and starts the API when a CA
 * exists (the first evaluation is awaited), then follows config and address
 * changes. Never throws for a bad CA: the reason goes to MachineStatus.
 */
export async function startNodeApiPki(o: NodeApiPkiOptions): Promise<NodeApiPki> {
  const { machined, keeper } = o;
  const debounceMs = o.debounceMs ?? 1000;
  let ca: CertificateAuthority | undefined;
  let caSource: CaSourceKind = "none";
  let server: KeyedCertificate | undefined;
  let api: ApiHandle | undefined;
  let renewer: ServerCertRenewer | undefined;
  let chain: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let maintenance: MaintenanceApi | undefined;
  const abort = new AbortController();

  const caView: CertificateAuthority = {
    get cert() {
      return ca!.cert;
    },
    get certPem() {
      return ca!.certPem;
    },
    get key() {
      return ca!.key;
    },
    get keyPem() {
      return ca!.keyPem;
    },
  };

  const enqueue = (job: () => Promise<void>): Promise<void> => {
    const next = chain.then(job).catch((e) => {
      machined.logger.error("pki", "API PKI update failed", { error: e });
    });
    chain = next;
    return next;
  };

  const names = (): ServerNames =>
    wantedServerNames({
      hostname: keeper.config?.machine.hostname ?? o.fallbackHostname,
      certSans: keeper.config?.machine.api?.cert_sans ?? [],
      addresses: machined.store.list(ADDRESS_STATUS).map((r) => r.spec),
    });

  const install = async (next: KeyedCertificate, wanted: ServerNames, why: string) => {
    server = next;
    await prepareApidPki({ ca: ca!, server: next }, o.apidPkiDir);
    renewer?.stop();
    const mine: ServerCertRenewer = renewer = createServerCertRenewer({
      ca: ca!,
      current: next,
      ...wanted,
      dir: o.pkiDir,
      clock: o.clock,
      onRenewed: (renewed) =>
        enqueue(async () => {
          if (renewer !== mine || stopped) return; // superseded by a re-issue
          server = renewed;
          await prepareApidPki({ ca: ca!, server: renewed }, o.apidPkiDir);
          await api?.restartApid();
          machined.events.emit(
            "api",
            "apid",
            "certificateRenewed",
            "server certificate renewed; apid restarted",
          );
        }),
      onError: (e) =>
        machined.logger.error("pki", "server certificate renewal failed", { error: e }),
    });
    const sans = sanList(wanted);
    if (!api) {
      try {
        api = await o.startApi({ dir: o.pkiDir, ca: caView, server: next, written: [] });
      } catch (e) {
        refuse(`it failed to start: ${(e as Error).message}`); // retried on the next change
        throw e;
      }
      machined.conditions.set(API_CONDITION, undefined);
      machined.logger.info("pki", `API started with ${describeCaSource(caSource)}`, {
        sans: sans.join(","),
      });
      return;
    }
    await api.restartApid();
    machined.events.emit("api", "apid", why, `${why}: ${sans.join(", ")}; apid restarted`, {
      sans: sans.join(","),
      caSource,
    });
  };

  /** The API cannot start: say so in MachineStatus, and once in the log. */
  const refuse = (reason: string) => {
    const text = `the API is not started: ${reason}`;
    if (machined.conditions.list().some((c) => c.name === API_CONDITION && c.reason === text)) {
      return;
    }
    machined.conditions.set(API_CONDITION, text);
    machined.logger.warn("pki", text);
  };

  const reconcile = async () => {
    if (stopped) return;
    const choice = chooseCaSource({
      config: keeper.config?.machine.ca
        ? { certPem: keeper.config.machine.ca.crt, keyPem: keeper.config.machine.ca.key }
        : undefined,
      state: keeper.stateText === undefined ? undefined : caSectionOf(keeper.stateText),
      badConfig: keeper.rejectedText === undefined ? undefined : caSectionOf(keeper.rejectedText),
      image: o.imageCa,
    });
    if (choice.source === "none") {
      if (!ca && o.gate && !maintenance) {
        maintenance = await enterMaintenance(o, names(), (pki) => o.startApi(pki));
        api = maintenance.api;
        return;
      }
      if (!ca && !o.gate) {
        refuse(`${describeCaSource("none")} (give the node a config or an image with machine.ca)`);
      }
      return; // a CA in use stays in use: nothing better is known
    }
    const wanted = names();
    if (!ca || ca.certPem.trim() !== choice.ca.certPem.trim()) {
      let pki: NodePki;
      try {
        // Only machined may enter the directory that holds the CA key.
        await Deno.mkdir(o.pkiDir, { recursive: true, mode: 0o700 });
        await Deno.chmod(o.pkiDir, 0o700);
        pki = await loadOrCreateNodePki(o.pkiDir, { ...wanted, ca: choice.ca });
      } catch (e) {
        const reason = `cannot use ${describeCaSource(choice.source)}: ${(e as Error).message}`;
        if (maintenance) o.gate?.reopen(); // still no CA anyone holds: let another config in
        if (!ca && !maintenance) refuse(reason);
        else machined.logger.error("pki", reason, { error: e });
        return;
      }
      const changed = ca !== undefined;
      ca = pki.ca;
      caSource = choice.source;
      machined.conditions.set(API_CONDITION, undefined);
      let next = pki.server;
      if (!certificateNamesExactly(next.cert, wanted)) {
        next = await renewServerCertificate({ ca, ...wanted, dir: o.pkiDir });
      }
      await install(
        next,
        wanted,
        changed ? "caChanged" : maintenance ? "maintenanceEnded" : "certificateIssued",
      );
      if (maintenance && o.gate) o.gate.serving = false;
      maintenance = undefined;
      return;
    }
    caSource = choice.source;
    if (server && !certificateNamesExactly(server.cert, wanted)) {
      const next = await renewServerCertificate({ ca, ...wanted, dir: o.pkiDir });
      await install(next, wanted, "certificateReissued");
    } else if (server && !api) {
      await install(server, wanted, "certificateIssued"); // an earlier start failed
    }
  };

  const schedule = () => {
    if (stopped) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      enqueue(reconcile);
    }, debounceMs);
  };

  await enqueue(reconcile);
  const unsubscribe = keeper.onChange(schedule);
  (async () => {
    for await (const _ of machined.store.watch(ADDRESS_STATUS, { signal: abort.signal })) {
      schedule();
    }
  })().catch((e) => {
    if (!abort.signal.aborted) machined.logger.error("pki", "address watch ended", { error: e });
  });

  return {
    get caSource() {
      return caSource;
    },
    get server() {
      return server;
    },
    get apiStarted() {
      return api !== undefined;
    },
    get fingerprint() {
      return maintenance?.fingerprint;
    },
    reconcileNow: () => enqueue(reconcile),
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      unsubscribe();
      abort.abort();
      renewer?.stop();
    },
  };
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
