/**
 * How machined starts machined-edge, the Rust network edge
 * (native-ops/edge/): its binary, its flags (apid's, so the supervisor and
 * the limits from the config are shared, plus the limits only the edge
 * enforces) and the ProcessSpec: the machined-api user, no capabilities, no
 * new privileges, its own session.
 */
import { fileURLToPath as fromFileUrl } from "node:url";
import type { ProcessSpec } from "../../platform/process/mod.ts";
import { APID_GID, APID_UID } from "./apid_process_spec.ts";
import { apidArgs, type ApidOptions } from "./apid_options.ts";
import { budgetArgs, type EdgeLimits } from "./budgets.ts";

/** Where the image puts the binary (imager/build_steps.ts). */
export const IMAGE_EDGE_PATH = "/machined/bin/machined-edge";

export type { EdgeLimits } from "./budgets.ts";

/** The edge's options: its budgets, and where Watch streams fan out. */
export interface EdgeOptions extends EdgeLimits {
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
  readonly limits?: EdgeOptions;
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
 * edges cannot drift on the flags they share), then every edge-only budget
 * (api/edge/budgets.ts), from `limits` where set. Pure.
 */
export function edgeArgs(o: ApidOptions, limits: EdgeOptions = {}): string[] {
  return [
    ...apidArgs(o),
    ...budgetArgs(limits),
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
    // apid faces the network: the default seccomp profile (docs/hardening.md), and as its own
    // user no capabilities. Run as root (dev mode) it keeps them, to read the PKI files chowned
    // to that user.
    sandbox: { seccomp: "default", ...(o.dropUser ? { capabilities: [] } : {}) },
    stdout: "pipe",
    stderr: "pipe",
    ...(o.dropUser ? { uid: APID_UID, gid: APID_GID, groups: [] } : {}),
  };
}
