/**
 * Issues client configs for GenerateClientConfiguration. It runs in machined,
 * which holds the CA key; apid never sees it for this purpose.
 */
import {
  type CertificateAuthority,
  DAY_MS,
  generateClientConfig,
  type Role,
  stringifyClientConfig,
} from "../../pki/mod.ts";

/**
 * The longest client certificate GenerateClientConfiguration issues: one
 * year, which is also the lifetime when a request names none. A request for
 * longer is refused (InvalidArgument), not shortened: a caller who asked for
 * two years must not believe they got them. Longer-lived certificates can
 * only come from the secrets bundle, offline (`machinectl gen client`).
 */
export const MAX_API_CLIENT_CERT_LIFETIME_MS = 365 * DAY_MS;

/**
 * The lifetime to issue for a requested one (ms; undefined: the default).
 * @throws RangeError (InvalidArgument over the API) when it is not positive
 *   or exceeds {@link MAX_API_CLIENT_CERT_LIFETIME_MS}.
 */
export function clientCertLifetimeMs(requestedMs: number | undefined): number {
  if (requestedMs === undefined) return MAX_API_CLIENT_CERT_LIFETIME_MS;
  if (!(requestedMs > 0)) throw new RangeError(`Lifetime must be positive, got ${requestedMs} ms`);
  if (requestedMs > MAX_API_CLIENT_CERT_LIFETIME_MS) {
    throw new RangeError(
      `Lifetime ${requestedMs} ms (${(requestedMs / DAY_MS).toFixed(1)} days) exceeds the cap ` +
        `of ${MAX_API_CLIENT_CERT_LIFETIME_MS} ms (365 days) for client certificates issued ` +
        `over the API`,
    );
  }
  return requestedMs;
}

/** What the RPC returns. */
export interface IssuedClientConfig {
  readonly configYaml: string;
  readonly caPem: string;
  readonly crtPem: string;
  readonly keyPem: string;
}

/** Parameters of one issue. */
export interface IssueClientConfigParams {
  readonly role: Role;
  readonly name: string;
  /** Empty means the node's own endpoints. */
  readonly endpoints: readonly string[];
  /** @default one year; at most {@link MAX_API_CLIENT_CERT_LIFETIME_MS} */
  readonly lifetimeMs?: number;
}

/** Issues client configs. */
export interface ClientConfigIssuer {
  /**
   * @throws RangeError for an empty name, no endpoints at all, or a lifetime
   *   that is not positive or above the cap.
   */
  issue(params: IssueClientConfigParams): Promise<IssuedClientConfig>;
}

/**
 * An issuer over the node CA.
 * @param defaultEndpoints the node's API endpoints, used when a request names none.
 */
export function createClientConfigIssuer(
  ca: CertificateAuthority,
  defaultEndpoints: () => readonly string[],
): ClientConfigIssuer {
  return {
    async issue(params) {
      const endpoints = params.endpoints.length > 0 ? params.endpoints : defaultEndpoints();
      const config = await generateClientConfig({
        secrets: { ca },
        role: params.role,
        name: params.name,
        endpoints,
        lifetimeMs: clientCertLifetimeMs(params.lifetimeMs),
      });
      const ctx = config.contexts[config.context!];
      return {
        configYaml: stringifyClientConfig(config),
        caPem: atob(ctx.ca),
        crtPem: atob(ctx.crt),
        keyPem: atob(ctx.key),
      };
    },
  };
}
