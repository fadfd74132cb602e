/**
 * `machinectl gen config NAME --endpoint ADDR --out DIR`: a node's machine
 * config, its secrets bundle (the CA) and an admin client config, like
 * `talosctl gen config`. `machinectl gen client`: more client configs from
 * the secrets bundle, for any role.
 */
import { renderConfigTemplate } from "../../config/mod.ts";
import {
  generateClientConfig,
  generateNodeBundle,
  isRole,
  loadSecretsBundle,
  ROLES,
  writeClientConfig,
} from "../../pki/mod.ts";
import type { Command } from "../command.ts";
import { CliError } from "../io.ts";

export const genConfigCommand: Command = {
  name: "gen config",
  usage: "gen config NAME --endpoint HOST[:PORT] [--out DIR] [--force] [--install-disk DEV]",
  summary: "Generate a machine config, secrets bundle and admin client config",
  connects: false,
  flags: {
    endpoint: { type: "string", description: "where clients reach the node's API" },
    out: { type: "string", default: ".", description: "output directory" },
    force: { type: "boolean", description: "overwrite existing files" },
    "install-disk": { type: "string", description: "install disk for the machine config" },
  },
  async run({ flags, args, io }) {
    const [name] = args;
    if (!name) throw new CliError("gen config: NAME is required");
    if (!flags.endpoint) throw new CliError("gen config: --endpoint HOST[:PORT] is required");
    const bundle = await generateNodeBundle({
      name,
      endpoint: flags.endpoint,
      outDir: flags.out,
      force: flags.force,
      renderMachineConfig: ({ ca }) =>
        renderConfigTemplate({
          hostname: name,
          installDisk: flags["install-disk"],
          ca,
          certSans: [flags.endpoint.replace(/:\d+$/, "").replace(/^\[|\]$/g, "")],
        }),
    });
    io.out(`wrote ${bundle.paths.machineConfig} (machine config)`);
    io.out(`wrote ${bundle.paths.secrets} (secrets: the node CA; keep it safe)`);
    io.out(`wrote ${bundle.paths.clientConfig} (admin client config)`);
    io.out(`next: machinectl --config ${bundle.paths.clientConfig} version`);
    return 0;
  },
};

export const genClientCommand: Command = {
  name: "gen client",
  usage: "gen client --secrets FILE --role ROLE --name NAME --endpoint HOST[:PORT] --out FILE",
  summary: "Issue a client config for a role from the secrets bundle",
  connects: false,
  flags: {
    secrets: { type: "string", default: "secrets.yaml", description: "secrets bundle" },
    role: { type: "string", default: "os:reader", description: ROLES.join(", ") },
    name: { type: "string", description: "who the certificate is for (CN)" },
    endpoint: { type: "string", multiple: true, description: "node endpoint(s)" },
    out: { type: "string", description: "client config file to write" },
  },
  async run({ flags, io }) {
    if (!isRole(flags.role)) {
      throw new CliError(`unknown role "${flags.role}" (use ${ROLES.join(", ")})`);
    }
    if (!flags.name) throw new CliError("gen client: --name is required");
    if (!flags.endpoint?.length) throw new CliError("gen client: --endpoint is required");
    if (!flags.out) throw new CliError("gen client: --out FILE is required");
    const secrets = await loadSecretsBundle(flags.secrets);
    const config = await generateClientConfig({
      secrets,
      role: flags.role,
      name: flags.name,
      endpoints: flags.endpoint,
    });
    await writeClientConfig(flags.out, config);
    io.out(`wrote ${flags.out} (${flags.role} client config for "${flags.name}")`);
    return 0;
  },
};
