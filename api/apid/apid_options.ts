/**
 * apid's command line, parsed into typed options (and rendered back, so the
 * supervisor and the parser cannot drift apart).
 */
import { parseArgs } from "node:util";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../server/internal_server.ts";
import { apidGrants } from "./privileges.ts";
import type { ApiConfig } from "../../config/schema/api.ts";

/** Everything apid is told at start. */
export interface ApidOptions {
  /** Directory with ca.crt, ca.key, server.crt, server.key. */
  readonly pkiDir: string;
  /** machined's API socket. */
  readonly socketPath: string;
  /** @default "0.0.0.0" */
  readonly hostname: string;
  /** 0 picks a free port (tests). @default 50000 */
  readonly port: number;
  readonly readMaxBytes: number;
  readonly writeMaxBytes: number;
  readonly maxConcurrentStreams: number;
}

/** Defaults of every optional flag. */
export const APID_DEFAULTS = {
  hostname: "0.0.0.0",
  port: 50000,
  readMaxBytes: DEFAULT_MAX_MESSAGE_BYTES,
  writeMaxBytes: DEFAULT_MAX_MESSAGE_BYTES,
  maxConcurrentStreams: 100,
} as const;

/** The limits the machine config sets (`machine.api`). */
export type ApidLimits = Pick<
  ApidOptions,
  "readMaxBytes" | "writeMaxBytes" | "maxConcurrentStreams"
>;

/**
 * `machine.api.max_message_bytes` bounds messages both ways;
 * `machine.api.max_concurrent_streams` is the HTTP/2 setting per client
 * connection. Without a config, apid's defaults (which equal the schema's).
 */
export function apidLimitsFromConfig(
  api: Pick<ApiConfig, "max_message_bytes" | "max_concurrent_streams"> | undefined,
): ApidLimits {
  return {
    readMaxBytes: api?.max_message_bytes ?? APID_DEFAULTS.readMaxBytes,
    writeMaxBytes: api?.max_message_bytes ?? APID_DEFAULTS.writeMaxBytes,
    maxConcurrentStreams: api?.max_concurrent_streams ?? APID_DEFAULTS.maxConcurrentStreams,
  };
}

/**
 * Parses `--pki-dir D --socket S [--listen host:port] [--read-max-bytes N]
 * [--write-max-bytes N] [--max-concurrent-streams N] `.
 * @throws TypeError for a missing or malformed flag.
 */
export function parseApidArgs(args: readonly string[]): ApidOptions {
  const { values } = parseArgs({
    args: [...args],
    options: {
      "pki-dir": { type: "string" },
      socket: { type: "string" },
      listen: { type: "string" },
      "read-max-bytes": { type: "string" },
      "write-max-bytes": { type: "string" },
      "max-concurrent-streams": { type: "string" },
    },
    strict: true,
  });
  const required = (flag: "pki-dir" | "socket") => {
    const v = values[flag];
    if (!v) throw new TypeError(`apid needs --${flag}`);
    return v;
  };
  const positive = (flag: string, v: string | undefined, dflt: number) => {
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw new TypeError(`apid --${flag} must be a positive integer, got "${v}"`);
    }
    return n;
  };
  let hostname: string = APID_DEFAULTS.hostname;
  let port: number = APID_DEFAULTS.port;
  if (values.listen !== undefined) {
    const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(values.listen);
    if (!m || Number(m[3]) > 65535) {
      throw new TypeError(`apid --listen must be host:port, got "${values.listen}"`);
    }
    hostname = m[1] ?? (m[2] || APID_DEFAULTS.hostname);
    port = Number(m[3]);
  }
  return {
    pkiDir: required("pki-dir"),
    socketPath: required("socket"),
    hostname,
    port,
    readMaxBytes: positive("read-max-bytes", values["read-max-bytes"], APID_DEFAULTS.readMaxBytes),
    writeMaxBytes: positive(
      "write-max-bytes",
      values["write-max-bytes"],
      APID_DEFAULTS.writeMaxBytes,
    ),
    maxConcurrentStreams: positive(
      "max-concurrent-streams",
      values["max-concurrent-streams"],
      APID_DEFAULTS.maxConcurrentStreams,
    ),
  };
}

/** Renders options as flags {@link parseApidArgs} accepts. Pure. */
export function apidArgs(o: ApidOptions): string[] {
  const host = o.hostname.includes(":") ? `[${o.hostname}]` : o.hostname;
  return [
    `--pki-dir=${o.pkiDir}`,
    `--socket=${o.socketPath}`,
    `--listen=${host}:${o.port}`,
    `--read-max-bytes=${o.readMaxBytes}`,
    `--write-max-bytes=${o.writeMaxBytes}`,
    `--max-concurrent-streams=${o.maxConcurrentStreams}`,
  ];
}

/**
 * The Deno permission flags apid needs and nothing more, rendered from
 * {@link apidGrants}: read its PKI directory (revoked once loaded) and the
 * socket, write the socket (connecting to a Unix socket needs it), and listen
 * on its host.
 */
export function apidPermissionFlags(o: ApidOptions): string[] {
  const grants = apidGrants(o);
  const of = (name: string) =>
    grants.filter((g) => g.name === name).map((g) => "path" in g ? g.path : g.host).join(",");
  return [
    "--no-prompt",
    `--allow-read=${of("read")}`,
    `--allow-write=${of("write")}`,
    `--allow-net=${of("net")}`,
  ];
}
