/**
 * What `machinectl gen config` produces for a new node: the machine config
 * (rendered by config/ from a template, with the CA embedded), the secrets
 * bundle, and an admin client config, written together into one directory.
 *
 * @module
 */
import { join } from "node:path";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { type ClientConfig, writeClientConfig } from "./client_config.ts";
import { generateClientConfig } from "./generate_client_config.ts";
import { pathExists, writeFileAtomic } from "./atomic_write.ts";
import { PkiError } from "./pki_error.ts";
import { type SecretsBundle, writeSecretsBundle } from "./secrets_bundle.ts";

/** File names {@link generateNodeBundle} writes into `outDir`. */
export const BUNDLE_FILES = {
  machineConfig: "machine.yaml",
  secrets: "secrets.yaml",
  clientConfig: "machinectl.yaml",
} as const;

/** What a machine config template receives. */
export interface MachineConfigInput {
  /** The node name (also the client config's context name). */
  name: string;
  /** The API endpoint given to `gen config`. */
  endpoint: string;
  /** The node CA, to embed so the node serves with it. */
  ca: { certPem: string; keyPem: string };
}

/** Parameters of {@link generateNodeBundle}. */
export interface GenerateNodeBundleParams {
  /** Node name: machine config hostname and client context name. */
  name: string;
  /** Endpoint for the client config, `host[:port]` (port defaults to 50000). */
  endpoint: string;
  outDir: string;
  /** The machine config text, or a renderer given the CA (config/ provides one). */
  renderMachineConfig: string | ((input: MachineConfigInput) => string | Promise<string>);
  /** Reuse an existing bundle's CA instead of creating one (more nodes, one CA). */
  secrets?: SecretsBundle;
  /** Overwrite existing files. @default false */
  force?: boolean;
  now?: Date;
}

/** What {@link generateNodeBundle} wrote. */
export interface NodeBundle {
  secrets: SecretsBundle;
  clientConfig: ClientConfig;
  paths: { machineConfig: string; secrets: string; clientConfig: string };
}

/**
 * Create (or reuse) the CA, an `os:admin` client config for it, and the machine
 * config; write all three files (0600) into `outDir`, creating it.
 * @throws {PkiError} `exists` naming the files when any exists and `force` is not set
 */
export async function generateNodeBundle(params: GenerateNodeBundleParams): Promise<NodeBundle> {
  const paths = {
    machineConfig: join(params.outDir, BUNDLE_FILES.machineConfig),
    secrets: join(params.outDir, BUNDLE_FILES.secrets),
    clientConfig: join(params.outDir, BUNDLE_FILES.clientConfig),
  };
  if (!params.force) {
    const existing: string[] = [];
    for (const p of Object.values(paths)) if (await pathExists(p)) existing.push(p);
    if (existing.length > 0) {
      throw new PkiError(
        "exists",
        `Refusing to overwrite ${existing.map((p) => `"${p}"`).join(", ")} (use force)`,
        { path: params.outDir, present: existing },
      );
    }
  }
  const secrets = params.secrets ?? { ca: await createCertificateAuthority({ now: params.now }) };
  const clientConfig = await generateClientConfig({
    secrets,
    role: "os:admin",
    name: "admin",
    context: params.name,
    endpoints: [params.endpoint],
    now: params.now,
  });
  const machineConfig = typeof params.renderMachineConfig === "string"
    ? params.renderMachineConfig
    : await params.renderMachineConfig({
      name: params.name,
      endpoint: params.endpoint,
      ca: { certPem: secrets.ca.certPem, keyPem: secrets.ca.keyPem },
    });
  await Deno.mkdir(params.outDir, { recursive: true, mode: 0o700 });
  await writeSecretsBundle(paths.secrets, secrets);
  await writeClientConfig(paths.clientConfig, clientConfig);
  await writeFileAtomic(paths.machineConfig, machineConfig, { mode: 0o600 });
  return { secrets, clientConfig, paths };
}
