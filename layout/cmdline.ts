/**
 * The kernel command line, parsed: machined reads its own `machined.*` keys
 * (where the config comes from, the API port) and ignores the rest.
 */

/** `key=value` pairs and bare flags; quotes group values with spaces. Pure. */
export function parseCmdline(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /(\S+?)(?:=("[^"]*"|\S*))?(?:\s+|$)/g;
  for (const m of text.trim().matchAll(re)) {
    if (!m[1]) continue;
    if (m[1] === "--") break;
    const value = m[2] ?? "";
    out.set(m[1], value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value);
  }
  return out;
}

/** Where the machine config may come from, in priority order. */
export interface ConfigCandidates {
  /** Paths to try, first wins. */
  paths: string[];
  /** Inline config (base64 YAML) from `machined.config.b64=`, when given. */
  inline?: string;
}

/** The state partition's config path (persisted after the first valid boot). */
export const STATE_CONFIG_PATH = "/system/state/config.yaml";
/** The config baked into the image by the imager. */
export const IMAGE_CONFIG_PATH = "/etc/machined/config.yaml";

/**
 * Config sources: the STATE partition (what the node last accepted), then
 * `machined.config=PATH` from the command line, then the image's. Pure.
 */
export function configCandidates(cmdline: Map<string, string>): ConfigCandidates {
  const paths = [STATE_CONFIG_PATH];
  const fromCmdline = cmdline.get("machined.config");
  // A URL is fetched later, once the network is up (config/keeper/late_config.ts).
  if (fromCmdline && !/^https?:\/\//i.test(fromCmdline)) paths.push(fromCmdline);
  paths.push(IMAGE_CONFIG_PATH);
  const inline = cmdline.get("machined.config.b64");
  return inline ? { paths, inline } : { paths };
}
