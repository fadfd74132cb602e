/**
 * "API ready" means a client was answered: machined calls its own API through
 * the edge, over mutual TLS, on the address a client dials, verifying the
 * server certificate for that address, and only an answer makes the API
 * ready (issue 25 item 9: the edge listening came seconds before the first
 * call was answered). This module is the retry loop and the choice of the
 * address, over injected calls and clocks; api_probe_client.ts makes the
 * real call.
 *
 * @module
 */
import { formatIp, parseIp } from "../../ip/mod.ts";
import type { AddressStatusSpec } from "../../resources/mod.ts";
import { canonicalIp } from "./api_server_names.ts";

/** Bounds of {@link probeApi}, in milliseconds. */
export interface ApiProbeBounds {
  readonly deadlineMs: number;
  readonly retryMs: number;
  readonly lookMs: number;
  readonly attemptTimeoutMs: number;
  readonly addressGraceMs: number;
}

/** Bounds of {@link probeApi}. */
export const API_PROBE_DEFAULTS: ApiProbeBounds = {
  /** Past this (from the edge listening) the line is printed anyway, `probe=timeout`. */
  deadlineMs: 60_000,
  /** Wait after a failed attempt. */
  retryMs: 250,
  /** Wait between looks while there is nothing to dial yet (no address, or its certificate). */
  lookMs: 50,
  /** One call's bound (TCP, TLS and the answer). */
  attemptTimeoutMs: 5_000,
  /**
   * How long the probe waits for the node's first routable address before it
   * dials loopback instead: a node with no network still gets its line.
   */
  addressGraceMs: 30_000,
};

/** What {@link probeApi} reports. */
export interface ApiProbeResult {
  /**
   * `ok`: a call was answered; `timeout`: none by the deadline; `unprobed`:
   * no call could be made (no probe identity).
   */
  readonly outcome: "ok" | "timeout" | "unprobed";
  /** From the probe's start to the answer (or to the deadline). */
  readonly ms: number;
  readonly attempts: number;
  /** The address of the answered call, or the last one dialled. */
  readonly address: string | undefined;
  /** Why the last attempt failed (a timeout's reason). */
  readonly lastError: string | undefined;
}

/**
 * Where to dial: an address, undefined while there is none yet, or what the
 * probe waits for before it dials one (kept as the reason of a timeout).
 */
export type ProbeTarget = string | { readonly waitingFor: string } | undefined;

/** What {@link probeApi} calls; tests pass fakes. */
export interface ApiProbeDeps {
  /** The address to dial now, or why not yet (see {@link chooseProbeAddress}). */
  address(elapsedMs: number): ProbeTarget;
  /** One call to `address`; resolves when it was answered, rejects otherwise. */
  call(address: string, timeoutMs: number): Promise<void>;
  /** Monotonic milliseconds. @default performance.now */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Calls until one call is answered or `deadlineMs` has passed; never throws
 * (a call's error is kept as the reason), so boot cannot hang or fail on it.
 * An attempt never outlives the deadline.
 */
export async function probeApi(
  deps: ApiProbeDeps,
  bounds: Partial<ApiProbeBounds> = {},
): Promise<ApiProbeResult> {
  const b = { ...API_PROBE_DEFAULTS, ...bounds };
  const now = deps.now ?? (() => performance.now());
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const start = now();
  let attempts = 0;
  let address: string | undefined;
  let lastError: string | undefined = "no address to dial yet";
  for (;;) {
    const elapsed = now() - start;
    const left = b.deadlineMs - elapsed;
    if (left <= 0) return { outcome: "timeout", ms: elapsed, attempts, address, lastError };
    const next = deps.address(elapsed);
    let pause = b.lookMs;
    if (typeof next === "object") lastError = `waiting for ${next.waitingFor}`;
    else if (next !== undefined) {
      address = next;
      attempts++;
      try {
        await deps.call(next, Math.min(b.attemptTimeoutMs, left));
        return { outcome: "ok", ms: now() - start, attempts, address, lastError: undefined };
      } catch (e) {
        lastError = e instanceof Error ? e.message : String(e);
        pause = b.retryMs;
      }
    }
    await sleep(Math.max(0, Math.min(pause, b.deadlineMs - (now() - start))));
  }
}

/**
 * Pure: where a client reaches the API. A specific listen host is dialled as
 * it is; a wildcard one (`0.0.0.0`, `::`) at the node's first routable
 * address (IPv4 first, IPv4 only for `0.0.0.0`; link-local and loopback ones
 * left out, as the server certificate leaves out link-local), which is what a
 * client outside dials;
 * with none yet, nothing until `graceOver`, then loopback.
 */
export function chooseProbeAddress(
  listenHost: string,
  addresses: readonly Pick<AddressStatusSpec, "address" | "scope" | "family">[],
  graceOver: boolean,
): string | undefined {
  const wildcard = listenHost === "" || listenHost === "0.0.0.0" || listenHost === "::";
  if (!wildcard) return listenHost;
  // `0.0.0.0` is IPv4 only: an IPv6 address (SLAAC's often comes before the DHCPv4 lease) is
  // never answered there. `::` is dual-stack (Linux's bindv6only=0), so either family is.
  const families = listenHost === "::" ? ["inet", "inet6"] : ["inet"];
  const routable = addresses
    .filter((a) => a.scope !== "link" && a.scope !== "host" && families.includes(a.family))
    .map((a) => ({ family: a.family, ip: parseIp(a.address.split("%")[0]) }))
    .filter((a) => a.ip !== undefined && !isLoopback(formatIp(a.ip)));
  const pick = routable.find((a) => a.family === "inet") ?? routable[0];
  if (pick) return formatIp(pick.ip!);
  if (!graceOver) return undefined;
  return listenHost === "::" ? "::1" : "127.0.0.1";
}

/**
 * Pure: `address` when the certificate the edge serves names it (`named`, IPs
 * in any text form), else what the probe waits for; undefined `named` means
 * the names are not known (maintenance mode's certificate), and the address
 * is dialled as it is. Dialling ahead of a re-issued certificate would fail
 * on the name, and the failed handshake holds the JS thread while the
 * certificate is being installed (issue 27).
 */
export function servedAddress(
  address: string | undefined,
  named: readonly string[] | undefined,
): ProbeTarget {
  if (address === undefined || named === undefined) return address;
  const wanted = canonicalIp(address);
  return named.some((n) => canonicalIp(n) === wanted)
    ? address
    : { waitingFor: `the served certificate to name ${address}` };
}

function isLoopback(ip: string): boolean {
  return ip === "::1" || ip.startsWith("127.");
}

/** `host:port` for an address, IPv6 in brackets. */
export function endpointOf(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * A certificate serial as the edge forwards it (lowercase hex of the DER
 * integer, which may start with 00) and as the x509 library prints it, made
 * comparable: lowercase, no leading zeros.
 */
export function normalizeSerial(serial: string): string {
  return serial.toLowerCase().replace(/^0+(?=.)/, "");
}
