/**
 * The console lines that say when the API is usable, which e2e and the boot
 * benches read (e2e/boot_figures.ts): `machined: API ready …` once a real
 * mutual-TLS call through the edge was answered (api/host/api_probe.ts), and
 * `machined: api first served …` once the first client's call (not the
 * probe's) was; then RSS and apid's privileges, and the footprint once
 * containerd is ready (api/host/footprint.ts).
 *
 * @module
 */
import type { Logger } from "../../logs/mod.ts";
import { ADDRESS_STATUS } from "../../resources/mod.ts";
import type { CallerIdentity } from "../auth/mod.ts";
import type { ApiHost } from "./api_host.ts";
import { splitListen } from "./api_host.ts";
import type { Machined } from "../../core/mod.ts";
import {
  API_PROBE_DEFAULTS,
  type ApiProbeBounds,
  type ApiProbeResult,
  chooseProbeAddress,
  normalizeSerial,
  probeApi,
  servedAddress,
} from "./api_probe.ts";
import { sanListIps } from "./api_server_names.ts";
import { callVersion, type ProbeCredentials, probeSerial } from "./api_probe_client.ts";
import { rssKiB, uptimeSeconds } from "./proc_stats.ts";
import { reportFootprintWhenReady } from "./footprint.ts";
import { formatPrivileges, readPrivileges } from "./apid_report.ts";

/** What {@link reportApiReady} reads and where it prints. */
export interface ApiReadyReportOptions {
  readonly api: ApiHost;
  /** performance.now() when machined started. */
  readonly started: number;
  readonly logger: Logger;
  readonly machined: Pick<Machined, "events" | "store">;
  /** `host:port` the edge listens on. */
  readonly listen: string;
  /** The probe's identity (api/host/api_probe_client.ts), made before the edge listens. */
  readonly credentials: () => Promise<ProbeCredentials>;
  /**
   * The names of the certificate the edge was last told to serve
   * (api/host/api_pki.ts's `servedNames`: "dns:…", "ip:…"): the probe dials
   * an address only once they name it. Undefined (or returning undefined):
   * dialled at once.
   */
  readonly servedNames?: () => readonly string[] | undefined;
  readonly bounds?: Partial<ApiProbeBounds>;
  /** @default console.log */
  readonly print?: (line: string) => void;
  /** Tests: no RSS, privileges or footprint lines. */
  readonly figures?: boolean;
}

/**
 * Probes the API once the edge listens and prints the ready line with the
 * probe's outcome; prints the first-served line when a client is first
 * answered. Never throws and never blocks boot: it runs beside it.
 */
export async function reportApiReady(o: ApiReadyReportOptions): Promise<ApiProbeResult> {
  const print = o.print ?? ((line: string) => console.log(line));
  const creds = await o.credentials().catch((e) => {
    o.logger.warn("boot", "cannot issue the API probe's identity", { error: e });
    return undefined;
  });
  let probed = false;
  const skip = skipProbeCalls(creds, () => probed);
  void o.api.firstServed(skip).then(async (f) => {
    const uptime = await uptimeSeconds();
    const ago = (performance.now() - f.at) / 1000;
    const at = uptime === undefined ? "" : ` uptime_s=${(uptime - ago).toFixed(2)}`;
    const ms = (f.at - o.started).toFixed(0);
    print(`machined: api first served machined_ms=${ms}${at} role=${f.caller.role}`);
  });
  const { port, pid } = await o.api.ready();
  const listenMs = performance.now() - o.started;
  const apidPid = () => o.api.supervisor.pid ?? pid;
  if (o.figures !== false) reportFootprintWhenReady(o.machined.events, apidPid);
  const result = await probe(o, creds, port);
  probed = true;
  const ms = (performance.now() - o.started).toFixed(0);
  const uptime = await uptimeSeconds();
  if (result.outcome !== "ok") {
    o.logger.warn("boot", `the API probe got no answer (${result.outcome})`, {
      attempts: result.attempts,
      address: result.address,
      reason: result.lastError,
    });
  }
  o.logger.info("boot", `API ready on port ${port}`, { msSinceMachinedStart: ms, uptime });
  print(
    `machined: API ready pid=${Deno.pid} port=${port} machined_ms=${ms} uptime_s=${uptime} ` +
      `probe=${result.outcome} probe_ms=${result.ms.toFixed(0)} ` +
      `probe_attempts=${result.attempts} probe_addr=${result.address ?? "none"} ` +
      `listen_ms=${listenMs.toFixed(0)}`,
  );
  if (o.figures !== false) setTimeout(() => printFigures(apidPid(), o.logger, print), 5_000);
  return result;
}

/** The probe's calls are not a client's: its serial, or in maintenance mode any call until it was answered. */
function skipProbeCalls(
  creds: ProbeCredentials | undefined,
  probed: () => boolean,
): (caller: CallerIdentity) => boolean {
  const serial = creds && probeSerial(creds);
  if (serial !== undefined) return (c) => normalizeSerial(c.serialNumber) === serial;
  return (c) => c.maintenance === true && !probed();
}

function probe(
  o: ApiReadyReportOptions,
  creds: ProbeCredentials | undefined,
  port: number,
): Promise<ApiProbeResult> {
  const bounds = { ...API_PROBE_DEFAULTS, ...o.bounds };
  if (!creds) {
    return Promise.resolve({
      outcome: "unprobed",
      ms: 0,
      attempts: 0,
      address: undefined,
      lastError: "no probe identity",
    });
  }
  const [host] = splitListen(o.listen);
  const namedIps = () => {
    const names = o.servedNames?.();
    return names && sanListIps(names);
  };
  return probeApi({
    address: (elapsed) =>
      servedAddress(
        chooseProbeAddress(
          host,
          o.machined.store.list(ADDRESS_STATUS).map((r) => r.spec),
          elapsed >= bounds.addressGraceMs,
        ),
        namedIps(),
      ),
    call: (address, timeoutMs) => callVersion(creds, address, port, timeoutMs),
  }, bounds);
}

/** RSS of machined and of the apid running now, then what the kernel says apid may do. */
async function printFigures(apid: number, logger: Logger, print: (l: string) => void) {
  print(`machined: rss machined_kib=${await rssKiB()} apid_kib=${await rssKiB(apid)}`);
  await readPrivileges(apid).then(
    (p) => print(formatPrivileges(apid, p)),
    (e) => logger.warn("apid", "cannot read its privileges", { error: e }),
  );
}
