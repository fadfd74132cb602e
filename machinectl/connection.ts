/**
 * Resolves which node to talk to and with which credentials (the client config
 * found via --config, $MACHINECTL_CONFIG, $XDG_CONFIG_HOME/machinectl/config.yaml, then
 * ~/.config/machinectl/config.yaml),
 * and builds a gRPC-over-mTLS client for MachineService.
 */
import type { Client } from "@connectrpc/connect";
import type { MachineService } from "../api/gen/machined/v1/machine_pb.ts";
import { createInsecureMachineClient, createMachineClient } from "../api/client/mod.ts";
import {
  type ClientCredentials,
  parseFingerprint,
  readClientConfig,
  resolveClientConfigPath,
  resolveCredentials,
  withDefaultPort,
} from "../pki/mod.ts";
import { CliError } from "./io.ts";

/** Flags every command that talks to a node accepts. */
export interface ConnectionFlags {
  config?: string;
  context?: string;
  /** Overrides the context's endpoints. */
  endpoints?: string[];
  /** A node in maintenance mode: no client certificate, no CA (api/client/insecure.ts). */
  insecure?: boolean;
  /** With `insecure`: the SHA-256 fingerprint the node printed, pinned. */
  fingerprint?: string;
}

/**
 * A client for one node. Closing it (or leaving a `using` block) drops the
 * HTTP/2 connection, so a command run in-process (tests) leaves nothing open.
 */
export interface NodeConnection extends Disposable {
  client: Client<typeof MachineService>;
  endpoint: string;
  /** Absent for an `--insecure` connection. */
  credentials?: ClientCredentials;
  configPath?: string;
  /** Closes the connection; calls in flight fail with Canceled. Idempotent. */
  close(): void;
}

/** Where the client config is read from. */
export function clientConfigPath(flags: ConnectionFlags): string {
  return resolveClientConfigPath(
    flags.config,
    {
      MACHINECTL_CONFIG: Deno.env.get("MACHINECTL_CONFIG"),
      XDG_CONFIG_HOME: Deno.env.get("XDG_CONFIG_HOME"),
    },
    Deno.env.get("HOME") ?? "/root",
  );
}

/**
 * Opens a connection to the first endpoint of the selected context.
 * @throws CliError when the client config is missing or has no usable context.
 */
export async function connectToNode(flags: ConnectionFlags): Promise<NodeConnection> {
  if (flags.insecure) return await connectInsecurely(flags);
  if (flags.fingerprint) throw new CliError("--fingerprint only goes with --insecure", 2);
  const configPath = clientConfigPath(flags);
  try {
    await Deno.stat(configPath);
  } catch {
    throw new CliError(
      `no client config at "${configPath}" (use --config FILE, $MACHINECTL_CONFIG, ` +
        `or machinectl gen config)`,
    );
  }
  let credentials: ClientCredentials;
  try {
    credentials = resolveCredentials(await readClientConfig(configPath), flags.context);
  } catch (e) {
    throw new CliError(`cannot use client config "${configPath}": ${(e as Error).message}`);
  }
  const endpoints = flags.endpoints?.length ? flags.endpoints : credentials.endpoints;
  if (endpoints.length === 0) {
    throw new CliError(`context "${credentials.name}" has no endpoints (use -e HOST[:PORT])`);
  }
  const endpoint = withDefaultPort(endpoints[0]);
  const { api, close } = createMachineClient({
    endpoint: `https://${bracketed(endpoint)}`,
    caPem: credentials.caPem,
    certPem: credentials.certPem,
    keyPem: credentials.keyPem,
  });
  return {
    client: api,
    endpoint,
    credentials,
    configPath,
    close,
    [Symbol.dispose]: close,
  };
}

function bracketed(endpoint: string): string {
  // IPv6 literals need brackets in URLs: "::1:50000" is ambiguous, "[::1]:50000" is not.
  const m = /^(.*):(\d+)$/.exec(endpoint);
  if (!m || !m[1].includes(":") || m[1].startsWith("[")) return endpoint;
  return `[${m[1]}]:${m[2]}`;
}

/**
 * The host (an IPv6 literal without brackets) and port of an endpoint that has
 * its port (`withDefaultPort`), for a raw TLS connection to it.
 */
export function endpointHostPort(endpoint: string): { host: string; port: number } | undefined {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(endpoint);
  return m ? { host: m[1], port: Number(m[2]) } : undefined;
}

/** `--insecure [--fingerprint F] -e HOST[:PORT]`: a node in maintenance mode. */
async function connectInsecurely(flags: ConnectionFlags): Promise<NodeConnection> {
  const given = flags.endpoints ?? [];
  if (given.length !== 1) {
    throw new CliError("--insecure needs exactly one endpoint: -e HOST[:PORT]", 2);
  }
  const endpoint = withDefaultPort(given[0]);
  const { host, port } = endpointHostPort(endpoint)!;
  let fingerprint: string | undefined;
  if (flags.fingerprint !== undefined) {
    try {
      fingerprint = parseFingerprint(flags.fingerprint);
    } catch (e) {
      throw new CliError((e as Error).message, 2);
    }
  }
  const { api, close } = await createInsecureMachineClient(host, port, fingerprint);
  return { client: api, endpoint, close, [Symbol.dispose]: close };
}
