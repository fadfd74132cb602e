/**
 * Commented, valid YAML configs for `machinectl gen config` and dev mode.
 * The text is written by hand (not stringified from an object) so that it
 * can carry comments and commented-out examples an operator can enable.
 *
 * @module
 */
import { DEFAULT_API_LISTEN } from "./schema/api.ts";

/** One interface in a generated config. */
export interface TemplateInterface {
  name: string;
  /** Use DHCP; default true when no addresses are given. */
  dhcp?: boolean;
  /** Static addresses with prefix, e.g. `"10.0.0.2/24"`. */
  addresses?: string[];
  /** Default gateway; adds a `to: default` route. */
  gateway?: string;
}

/** What a generated config is built from; everything but the hostname has a default. */
export interface ConfigTemplateOptions {
  hostname: string;
  domainname?: string;
  /** Install target; omitted leaves an example commented out. */
  installDisk?: string;
  /** `install.system`: write the system onto {@link installDisk} and boot from it. @default false */
  installSystem?: boolean;
  /** @default [{ name: "eth0", dhcp: true }] */
  interfaces?: TemplateInterface[];
  /** @default [] */
  nameservers?: string[];
  /** @default ["pool.ntp.org"] */
  timeServers?: string[];
  /** Turn clock sync off (dev mode, VMs whose host keeps time). @default false */
  timeDisabled?: boolean;
  /** @default {@link DEFAULT_API_LISTEN} */
  apiListen?: string;
  /** Run the built-in containerd. @default true */
  containerd?: boolean;
  /** Extra API certificate names, e.g. the endpoint operators dial. @default [] */
  certSans?: string[];
  /** The node CA to embed (from pki/), PEM text; omitted lets the node create one. */
  ca?: { certPem: string; keyPem: string };
  /** A payload service; omitted leaves an example commented out. */
  payload?: {
    id?: string;
    command: string[];
    /** Environment variables of the service. @default {} */
    env?: Record<string, string>;
    dependsOnContainerd?: boolean;
  };
}

const YAML_SPECIAL = /^(true|false|null|yes|no|on|off|y|n)$/i;

/** A YAML scalar for `s`: plain when unambiguous, double-quoted otherwise. */
const q = (s: string): string =>
  /^[A-Za-z/][A-Za-z0-9_./-]*$/.test(s) && !YAML_SPECIAL.test(s) ? s : JSON.stringify(s);
const list = (xs: readonly string[]): string => `[${xs.map(q).join(", ")}]`;

/**
 * Renders a commented machine config. The caller is responsible for giving
 * valid values (e.g. a valid hostname); the result is meant to be parsed
 * back with `parseMachineConfig`, which reports anything wrong.
 */
export function renderConfigTemplate(options: ConfigTemplateOptions): string {
  const containerd = options.containerd ?? true;
  const out: string[] = [
    "# machined machine config. Reference: docs/config.md",
    "# Validate with: machinectl validate -c <this file>",
    "version: v1alpha1",
    "machine:",
    `  hostname: ${q(options.hostname)}`,
  ];
  if (options.domainname) out.push(`  domainname: ${q(options.domainname)}`);
  out.push(...renderInstall(options), ...renderNetwork(options));
  out.push(
    "",
    "  time:",
    `    disabled: ${options.timeDisabled ?? false}`,
    `    servers: ${list(options.timeServers ?? ["pool.ntp.org"])}`,
  );
  out.push(
    "",
    "  # Kernel parameters; values may be strings or numbers.",
    "  sysctls: {}",
    '  #   net.ipv4.ip_forward: "1"',
    "",
    "  runtime:",
    "    containerd:",
    `      enabled: ${containerd}`,
    "",
    "  # Processes machined supervises. argv[0] must be an absolute path.",
  );
  out.push(...renderServices(options.payload, containerd));
  out.push(
    "",
    "  api:",
    `    listen: ${q(options.apiListen ?? DEFAULT_API_LISTEN)}`,
    "    # Extra names and addresses for the API certificate.",
    `    cert_sans: ${list(options.certSans ?? [])}`,
  );
  if (options.ca) {
    out.push(
      "",
      "  # The node CA. The key is a secret: keep this file private (0600).",
      "  ca:",
      ...block("crt", options.ca.certPem),
      ...block("key", options.ca.keyPem),
    );
  }
  out.push("");
  return out.join("\n");
}

/** `install`: the target disk, or an example commented out. */
function renderInstall(options: ConfigTemplateOptions): string[] {
  const out = ["", "  # Install target. Without it the node runs from its boot medium."];
  if (options.installDisk) {
    out.push("  install:", `    disk: ${q(options.installDisk)}`, "    wipe: false");
    if (options.installSystem) out.push("    system: true");
  } else {
    out.push("  # install:", '  #   disk: "/dev/vda"', "  #   wipe: false");
  }
  return out;
}

/** `network`: the interfaces (eth0 on DHCP by default) and the nameservers. */
function renderNetwork(options: ConfigTemplateOptions): string[] {
  const ifaces = options.interfaces ?? [{ name: "eth0", dhcp: true }];
  const out = ["", "  network:"];
  if (ifaces.length === 0) {
    out.push("    # No interfaces: links are left as they are.", "    interfaces: []");
  } else {
    out.push("    interfaces:");
    for (const i of ifaces) out.push(...renderInterface(i));
  }
  out.push(`    nameservers: ${list(options.nameservers ?? [])}`);
  out.push('    # search: ["example.org"]');
  return out;
}

/** `services`: the payload service, or an example commented out. */
function renderServices(p: ConfigTemplateOptions["payload"], containerd: boolean): string[] {
  if (p) {
    return [
      "  services:",
      `    - id: ${q(p.id ?? "payload")}`,
      `      command: ${list(p.command)}`,
      ...(p.env && Object.keys(p.env).length > 0
        ? [
          "      env:",
          ...Object.entries(p.env).map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`),
        ]
        : []),
      `      depends_on: ${list(p.dependsOnContainerd && containerd ? ["containerd"] : [])}`,
      "      restart: always",
      '      stop_grace_period: "10s"',
    ];
  }
  return [
    "  services: []",
    "  #  - id: payload",
    '  #    command: ["/usr/bin/sleep", "infinity"]',
    "  #    depends_on: [containerd]",
    "  #    restart: always",
  ];
}

/** A literal block scalar (`key: |`) holding multi-line text such as PEM. */
function block(key: string, text: string): string[] {
  const lines = text.replace(/\r\n/g, "\n").trimEnd().split("\n");
  return [`    ${key}: |`, ...lines.map((l) => `      ${l}`)];
}

function renderInterface(i: TemplateInterface): string[] {
  const addresses = i.addresses ?? [];
  const dhcp = i.dhcp ?? addresses.length === 0;
  const lines = [`      - name: ${q(i.name)}`, `        dhcp: ${dhcp}`];
  lines.push(`        addresses: ${list(addresses)}`);
  if (i.gateway) lines.push(`        routes: [{ to: "default", via: ${q(i.gateway)} }]`);
  else lines.push('        # routes: [{ to: "default", via: "10.0.0.1" }]');
  lines.push("        # mtu: 1500");
  return lines;
}

/**
 * The config dev mode boots with when none is given: it leaves the host's
 * links and clock alone, listens on loopback only, runs without containerd,
 * and supervises one `sleep infinity` payload.
 */
export function defaultDevConfig(hostname: string): string {
  return renderConfigTemplate({
    hostname,
    interfaces: [],
    timeDisabled: true,
    apiListen: "127.0.0.1:50000",
    containerd: false,
    payload: { command: ["/usr/bin/sleep", "infinity"] },
  });
}
