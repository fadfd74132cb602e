/**
 * What apid (machined-edge) is told at start, typed, and rendered as its
 * command line; the limits come from `machine.api`.
 */
import { DEFAULT_MAX_MESSAGE_BYTES } from "../server/mod.ts";
import type { ApiConfig } from "../../config/mod.ts";

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

/** Renders options as the flags machined-edge parses (native-ops/edge/src/options.rs). Pure. */
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
