/**
 * A rotation's view of one node: what its config in force says about its CAs
 * (MachineConfig over Get, as an admin sees it: certificates, never the key),
 * reached with whichever of the rotation's two credentials the node accepts,
 * and applying a config with mode no-reboot (`machine.ca` applies live).
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { createMachineClient } from "../../api/client/mod.ts";
import { fromProtoResource } from "../../api/mapping/mod.ts";
import { ApplyMode } from "../../api/gen/machined/v1/resources_pb.ts";
import { withDefaultPort } from "../../pki/mod.ts";
import type { ObservedCa } from "./plan.ts";
import type { PemCredentials } from "./rotation_state.ts";

/** How long one call to a node may take. */
const CALL_TIMEOUT_MS = 10_000;
/** Rounds over the candidates while the node's apid is down (it restarts when its CAs change). */
const REACH_ROUNDS = 10;
const REACH_PAUSE_MS = 500;

/** What a node answered, and the credentials that reached it. */
export interface Reached {
  readonly observed: ObservedCa;
  readonly via: PemCredentials;
}

function urlOf(node: string): string {
  const endpoint = withDefaultPort(node);
  const m = /^(.*):(\d+)$/.exec(endpoint);
  const bracket = m && m[1].includes(":") && !m[1].startsWith("[");
  return `https://${bracket ? `[${m![1]}]:${m![2]}` : endpoint}`;
}

async function withClient<T>(
  node: string,
  creds: PemCredentials,
  fn: (api: ReturnType<typeof createMachineClient>["api"]) => Promise<T>,
): Promise<T> {
  const { api, close } = createMachineClient({
    endpoint: urlOf(node),
    caPem: creds.caPem,
    certPem: creds.certPem,
    keyPem: creds.keyPem,
  });
  try {
    return await fn(api);
  } finally {
    close();
  }
}

/**
 * `machine.ca` of the node's config in force, read with `creds`.
 * @throws ConnectError when the node cannot be reached or refuses the credentials
 */
export function observeCa(node: string, creds: PemCredentials): Promise<ObservedCa> {
  return withClient(node, creds, async (api) => {
    const r = await api.get({ type: "MachineConfig", id: "v1alpha1" }, {
      timeoutMs: CALL_TIMEOUT_MS,
    });
    if (!r.resource) throw new Error(`Node "${node}" has no MachineConfig`);
    const spec = fromProtoResource(r.resource).spec as {
      config?: { machine?: { ca?: { crt?: string; accepted?: string[] } } };
    };
    const ca = spec.config?.machine?.ca;
    return { crt: ca?.crt, accepted: ca?.accepted ?? [] };
  });
}

/**
 * The node as the first of `candidates` that reaches it sees it.
 * @throws Error naming the node and the last failure when none does
 */
export async function reachNode(
  node: string,
  candidates: readonly PemCredentials[],
): Promise<Reached> {
  let last: unknown;
  for (let round = 0; round < REACH_ROUNDS; round++) {
    if (round > 0) await new Promise((r) => setTimeout(r, REACH_PAUSE_MS));
    let down = false;
    for (const via of candidates) {
      try {
        return { observed: await observeCa(node, via), via };
      } catch (e) {
        last = e;
        down ||= e instanceof ConnectError && e.code === Code.Unavailable;
      }
    }
    // Only a refused or dropped connection is worth another round: apid restarts when its CAs
    // change, and a node's own answer (a certificate refused, no config) will not change. Any
    // candidate's counts: the old credentials' refusal must not hide that the new ones met a
    // restarting apid.
    if (!down) break;
  }
  throw new Error(`Cannot reach node "${node}" with the old or the new credentials`, {
    cause: last,
  });
}

/**
 * Applies `configYaml` with mode no-reboot. A refusal (invalid config, a
 * field that needs a reboot) throws; a connection dropped as apid restarts
 * with the new CAs does not: the caller waits for the node's new state.
 * @throws ConnectError InvalidArgument or FailedPrecondition from the node
 */
export async function applyLive(
  node: string,
  creds: PemCredentials,
  configYaml: string,
): Promise<void> {
  try {
    await withClient(node, creds, (api) =>
      api.applyConfiguration(
        { configYaml, mode: ApplyMode.NO_REBOOT },
        { timeoutMs: 60_000 },
      ));
  } catch (e) {
    const refused = e instanceof ConnectError &&
      [Code.InvalidArgument, Code.FailedPrecondition, Code.PermissionDenied].includes(e.code);
    if (refused) throw e;
  }
}
