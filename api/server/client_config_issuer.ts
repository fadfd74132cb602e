/**
 * Issues client configs for GenerateClientConfiguration. It runs in machined,
 * which holds the CA key; apid never sees it for this purpose.
 */
import {
  type CertificateAuthority,
  generateClientConfig,
  type Role,
  stringifyClientConfig,
} from "../../pki/mod.ts";

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
  readonly lifetimeMs?: number;
}

/** Issues client configs. */
export interface ClientConfigIssuer {
  /** @throws RangeError for an empty name or no endpoints at all. */
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
        lifetimeMs: params.lifetimeMs,
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
