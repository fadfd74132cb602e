/**
 * How machined starts machined-edge, the Rust network edge
 * (native-ops/edge/): its binary, its flags (apid's, so the supervisor and
 * the limits from the config are shared, plus the limits only the edge
 * enforces) and the ProcessSpec: the machined-api user, no capabilities, no
 * new privileges, its own session.
 */
import { fileURLToPath as fromFileUrl } from "node:url";
import type { ProcessSpec } from "../../platform/process/mod.ts";
import { APID_GID, APID_UID } from "../apid/apid_process_spec.ts";
import { apidArgs, type ApidOptions } from "../apid/apid_options.ts";

/** Where the image puts the binary (imager/build_steps.ts). */
export const IMAGE_EDGE_PATH = "/machined/bin/machined-edge";

/** The limits only the edge enforces; the defaults are the binary's own. */
export interface EdgeLimits {
  /** Request header block per request, bytes. @default 16384 */
  readonly maxHeaderBytes?: number;
  /** @default 10000 */
  readonly handshakeTimeoutMs?: number;
  /** A connection with nothing in flight this long is closed. @default 300000 */
  readonly idleTimeoutMs?: number;
  /** Open connections per client address. @default 256 */
  readonly maxConnectionsPerClient?: number;
  /**
   * Where gRPC Watch streams are fanned out: `edge` serves every client of one
   * (request, role) from one shared upstream Watch; `machined` forwards each
   * Watch as its own call (docs/decisions.md, "Watch fan-out at the edge").
   * @default "edge"
   */
  readonly watchFanout?: "edge" | "machined";
}

/** Options of {@link edgeProcessSpec}. */
export interface EdgeProcessSpecOptions {
  readonly apid: ApidOptions;
  readonly limits?: EdgeLimits;
  /** @default {@link edgeBinaryPath}() */
  readonly binary?: string;
  /** Run as machined-api (uid/gid 50000); off in dev mode and tests. @default false */
  readonly dropUser?: boolean;
}

/**
 * The binary: `$MACHINED_EDGE_BIN`, else the image's, else the workspace
 * build (`deno task native` builds it).
 */
export function edgeBinaryPath(): string {
  const env = Deno.env.get("MACHINED_EDGE_BIN");
  if (env) return env;
  try {
    if (Deno.statSync(IMAGE_EDGE_PATH).isFile) return IMAGE_EDGE_PATH;
  } catch {
    // not on a node
  }
  return fromFileUrl(
    new URL("../../native-ops/edge/target/release/machined-edge", import.meta.url),
  );
}

/**
 * machined-edge's flags for `o`: apid's own ({@link apidArgs}, so the two
 * edges cannot drift on the flags they share), then the edge-only limits that
 * are set. Pure.
 */
export function edgeArgs(o: ApidOptions, limits: EdgeLimits = {}): string[] {
  const optional: [string, number | undefined][] = [
    ["max-header-bytes", limits.maxHeaderBytes],
    ["handshake-timeout-ms", limits.handshakeTimeoutMs],
    ["idle-timeout-ms", limits.idleTimeoutMs],
    ["max-connections-per-client", limits.maxConnectionsPerClient],
  ];
  return [
    ...apidArgs(o),
    ...optional.filter(([, v]) => v !== undefined).map(([k, v]) => `--${k}=${v}`),
    ...(limits.watchFanout ? [`--watch-fanout=${limits.watchFanout}`] : []),
  ];
}

/** The ProcessSpec that starts machined-edge. */
export function edgeProcessSpec(o: EdgeProcessSpecOptions): ProcessSpec {
  return {
    argv: [o.binary ?? edgeBinaryPath(), ...edgeArgs(o.apid, o.limits)],
    env: {},
    newSession: true,
    noNewPrivs: true,
    stdout: "pipe",
    stderr: "pipe",
    ...(o.dropUser ? { uid: APID_UID, gid: APID_GID, groups: [] } : {}),
  };
}
