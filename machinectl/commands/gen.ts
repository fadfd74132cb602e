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
import { defineCommand } from "../command.ts";
import { CliError } from "../io.ts";

export const genConfigCommand = defineCommand({
  name: "gen config",
  args: "NAME",
  summary: "Generate a machine config, secrets bundle and admin client config",
  connects: false,
  flags: {
    endpoint: {
      kind: "string",
      value: "HOST[:PORT]",
      required: true,
      help: "where clients reach the node's API",
    },
    out: { kind: "string", default: ".", value: "DIR", help: "output directory" },
    force: { kind: "boolean", help: "overwrite existing files" },
    "install-disk": { kind: "string", value: "DEV", help: "install disk for the machine config" },
  },
  async run({ flags, args, io }) {
    const [name] = args;
    if (!name) throw new CliError("gen config: NAME is required");
    const endpoint = flags.endpoint;
    const bundle = await generateNodeBundle({
      name,
      endpoint,
      outDir: flags.out,
      force: flags.force,
      renderMachineConfig: ({ ca }) =>
        renderConfigTemplate({
          hostname: name,
          installDisk: flags["install-disk"],
          ca,
          certSans: [endpoint.replace(/:\d+$/, "").replace(/^\[|\]$/g, "")],
        }),
    });
    io.out(`wrote ${bundle.paths.machineConfig} (machine config)`);
    io.out(`wrote ${bundle.paths.secrets} (secrets: the node CA; keep it safe)`);
    io.out(`wrote ${bundle.paths.clientConfig} (admin client config)`);
    io.out(`next: machinectl --config ${bundle.paths.clientConfig} version`);
    return 0;
  },
});

export const genClientCommand = defineCommand({
  name: "gen client",
  summary: "Issue a client config for a role from the secrets bundle",
  connects: false,
  flags: {
    secrets: { kind: "string", default: "secrets.yaml", value: "FILE", help: "secrets bundle" },
    role: { kind: "string", default: "os:reader", help: ROLES.join(", ") },
    name: { kind: "string", required: true, help: "who the certificate is for (CN)" },
    endpoint: { kind: "strings", value: "HOST[:PORT]", required: true, help: "node endpoint(s)" },
    out: { kind: "string", value: "FILE", required: true, help: "client config file to write" },
  },
  async run({ flags, io }) {
    if (!isRole(flags.role)) {
      throw new CliError(`unknown role "${flags.role}" (use ${ROLES.join(", ")})`);
    }
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
});
