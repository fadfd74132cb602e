/**
 * Issue a client config from the secrets bundle: a new client certificate for
 * `name` with `role`, wrapped in a one-context config ready to merge.
 *
 * @module
 */
import { issueClientCertificate } from "./client_certificate.ts";
import {
  addContext,
  type ClientConfig,
  contextFromPem,
  emptyClientConfig,
} from "./client_config.ts";
import type { Role } from "./role.ts";
import type { SecretsBundle } from "./secrets_bundle.ts";

/** The API port clients dial when an endpoint names none. */
export const DEFAULT_API_PORT = 50000;

/** Parameters of {@link generateClientConfig}. */
export interface GenerateClientConfigParams {
  secrets: SecretsBundle;
  role: Role;
  /** The certificate's CN (who it is for). */
  name: string;
  /** Endpoints, `host`, `host:port` or `[v6]:port`; a missing port becomes 50000. */
  endpoints: readonly string[];
  /** Context name. @default name */
  context?: string;
  now?: Date;
  /** Client certificate lifetime. @default 1 year */
  lifetimeMs?: number;
}

/**
 * A one-context config whose context is current.
 * @throws {RangeError} for an unknown role, an empty name, or no endpoints
 */
export async function generateClientConfig(
  params: GenerateClientConfigParams,
): Promise<ClientConfig> {
  if (params.endpoints.length === 0) {
    throw new RangeError(`Cannot generate a client config for "${params.name}" without endpoints`);
  }
  const client = await issueClientCertificate({
    ca: params.secrets.ca,
    name: params.name,
    role: params.role,
    now: params.now,
    lifetimeMs: params.lifetimeMs,
  });
  const context = contextFromPem(params.endpoints.map(withDefaultPort), {
    caPem: params.secrets.ca.certPem,
    certPem: client.certPem,
    keyPem: client.keyPem,
  });
  return addContext(emptyClientConfig(), params.context ?? params.name, context, { use: true });
}

/**
 * Add the default port to an endpoint that has none: `node-1` → `node-1:50000`,
 * `fd00::1` → `[fd00::1]:50000`. Pure.
 */
export function withDefaultPort(endpoint: string): string {
  if (/^\[.*\]:\d+$/.test(endpoint)) return endpoint;
  if (endpoint.startsWith("[") && endpoint.endsWith("]")) return `${endpoint}:${DEFAULT_API_PORT}`;
  const colons = endpoint.split(":").length - 1;
  if (colons === 0) return `${endpoint}:${DEFAULT_API_PORT}`;
  if (colons > 1) return `[${endpoint}]:${DEFAULT_API_PORT}`; // bare IPv6
  return endpoint;
}
