/**
 * The `machinectl` client config (like `talosconfig`): named contexts, each
 * with endpoints and the CA, client certificate and key as base64 of PEM, and
 * the current context. Edits are pure functions returning a new config; the
 * file is read and written (0600, atomically) separately.
 *
 * ```yaml
 * context: node-1
 * contexts:
 *   node-1:
 *     endpoints: ["127.0.0.1:50000"]
 *     ca: <base64 PEM>
 *     crt: <base64 PEM>
 *     key: <base64 PEM>
 * ```
 *
 * @module
 */
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import * as v from "valibot";
import { writeFileAtomic } from "./atomic_write.ts";
import { PkiError } from "./pki_error.ts";

/** One context: where a node is and the credentials to reach it. */
export interface ClientContext {
  /** `host:port` (or `host`, meaning port 50000) API endpoints. */
  endpoints: string[];
  /** Base64 of the node CA's PEM certificate. */
  ca: string;
  /** Base64 of the client certificate's PEM. */
  crt: string;
  /** Base64 of the client key's PEM. */
  key: string;
  /**
   * Nodes `machinectl` runs each command on, concurrently, when no `-n` or `-e`
   * is given (machinectl/fanout.ts); each is dialed directly.
   */
  nodes?: string[];
}

/** The whole config file. */
export interface ClientConfig {
  /** The current context's name. */
  context?: string;
  contexts: Record<string, ClientContext>;
}

/** TLS material of a context, decoded to PEM. */
export interface ClientCredentials {
  name: string;
  endpoints: string[];
  caPem: string;
  certPem: string;
  keyPem: string;
  /** The context's `nodes`, when it has them. */
  nodes?: string[];
}

const Base64Pem = v.pipe(v.string(), v.regex(/^[A-Za-z0-9+/=\s]+$/, "must be base64"));
const ContextSchema = v.object({
  endpoints: v.array(v.pipe(v.string(), v.nonEmpty())),
  ca: Base64Pem,
  crt: Base64Pem,
  key: Base64Pem,
  nodes: v.optional(v.array(v.pipe(v.string(), v.nonEmpty()))),
});
const ConfigSchema = v.object({
  context: v.optional(v.string()),
  contexts: v.optional(v.record(v.string(), ContextSchema), {}),
});

/** An empty config. */
export function emptyClientConfig(): ClientConfig {
  return { contexts: {} };
}

/**
 * Where the config lives: the `--config` flag, else `$MACHINECTL_CONFIG`, else
 * `$XDG_CONFIG_HOME/machinectl/config.yaml` (the XDG base directory spec; an
 * unset, empty or relative value is ignored, as the spec says), else
 * `<home>/.config/machinectl/config.yaml`. Pure.
 */
export function resolveClientConfigPath(
  flag: string | undefined,
  env: { readonly MACHINECTL_CONFIG?: string; readonly XDG_CONFIG_HOME?: string },
  home: string,
): string {
  if (flag) return flag;
  if (env.MACHINECTL_CONFIG) return env.MACHINECTL_CONFIG;
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && xdg.startsWith("/")) return join(xdg, "machinectl", "config.yaml");
  return join(home, ".config", "machinectl", "config.yaml");
}

/**
 * Parse config text. An empty document is an empty config.
 * @throws {PkiError} `invalid` with every schema issue listed
 */
export function parseClientConfig(text: string, source = "client config"): ClientConfig {
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (e) {
    throw new PkiError("invalid", `Cannot parse ${source} as YAML`, { path: source }, { cause: e });
  }
  const result = v.safeParse(ConfigSchema, doc);
  if (!result.success) {
    const issues = result.issues.map((i) => `${v.getDotPath(i) ?? "(root)"}: ${i.message}`);
    throw new PkiError("invalid", `Invalid ${source}: ${issues.join("; ")}`, { path: source });
  }
  const config: ClientConfig = { contexts: result.output.contexts };
  if (result.output.context !== undefined) config.context = result.output.context;
  return config;
}

/** Render a config as YAML. Pure. */
export function stringifyClientConfig(config: ClientConfig): string {
  const doc = config.context ? { context: config.context, contexts: config.contexts } : {
    contexts: config.contexts,
  };
  return stringify(doc, { lineWidth: 0 });
}

/**
 * Read the config file; a missing file is an empty config (so the first
 * `config merge` can create it).
 * @throws {PkiError} `invalid` when the file does not parse
 */
export async function readClientConfig(path: string): Promise<ClientConfig> {
  try {
    return parseClientConfig(await Deno.readTextFile(path), path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return emptyClientConfig();
    throw e;
  }
}

/** Write the config atomically with mode 0600, creating its directory (0700). */
export async function writeClientConfig(path: string, config: ClientConfig): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, stringifyClientConfig(config), { mode: 0o600 });
}

/** Encode PEM material as a context. Pure. */
export function contextFromPem(
  endpoints: readonly string[],
  pem: { caPem: string; certPem: string; keyPem: string },
): ClientContext {
  return {
    endpoints: [...endpoints],
    ca: btoa(pem.caPem),
    crt: btoa(pem.certPem),
    key: btoa(pem.keyPem),
  };
}

/**
 * Add (or replace) a context. Pure.
 * @param options.use make it the current context @default true when there is none
 */
export function addContext(
  config: ClientConfig,
  name: string,
  context: ClientContext,
  options: { use?: boolean } = {},
): ClientConfig {
  const use = options.use ?? !config.context;
  return {
    context: use ? name : config.context,
    contexts: { ...config.contexts, [name]: context },
  };
}

/**
 * Merge every context of `from` into `into`; a name that is taken gets a
 * suffix (`name-1`, `name-2`, ...), as `talosctl config merge` does. The
 * current context becomes `from`'s (renamed) current one. Pure.
 */
export function mergeClientConfig(
  into: ClientConfig,
  from: ClientConfig,
): { config: ClientConfig; renamed: Record<string, string> } {
  const contexts = { ...into.contexts };
  const renamed: Record<string, string> = {};
  for (const [name, ctx] of Object.entries(from.contexts)) {
    let target = name;
    for (let i = 1; target in contexts; i++) target = `${name}-${i}`;
    if (target !== name) renamed[name] = target;
    contexts[target] = ctx;
  }
  const current = from.context ? (renamed[from.context] ?? from.context) : into.context;
  return { config: { context: current, contexts }, renamed };
}

/**
 * Make `name` the current context. Pure.
 * @throws {PkiError} `no_context` when there is no such context
 */
export function useContext(config: ClientConfig, name: string): ClientConfig {
  requireContext(config, name);
  return { ...config, context: name };
}

/** Context names in order, marking the current one. Pure. */
export function listContexts(
  config: ClientConfig,
): { name: string; current: boolean; endpoints: string[] }[] {
  return Object.entries(config.contexts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, ctx]) => ({ name, current: name === config.context, endpoints: ctx.endpoints }));
}

/**
 * The credentials of a context (`override`, e.g. from `--context`, or the
 * current one), decoded to PEM.
 * @throws {PkiError} `no_context` when none is selected or it does not exist;
 *   `invalid` when its material is not base64 PEM
 */
export function resolveCredentials(config: ClientConfig, override?: string): ClientCredentials {
  const name = override || config.context;
  if (!name) {
    throw new PkiError("no_context", "No context is selected in the client config", {});
  }
  const ctx = requireContext(config, name);
  return {
    name,
    endpoints: [...ctx.endpoints],
    caPem: decodePem(ctx.ca, name, "ca"),
    certPem: decodePem(ctx.crt, name, "crt"),
    keyPem: decodePem(ctx.key, name, "key"),
    ...(ctx.nodes?.length ? { nodes: [...ctx.nodes] } : {}),
  };
}

function requireContext(config: ClientConfig, name: string): ClientContext {
  const ctx = Object.hasOwn(config.contexts, name) ? config.contexts[name] : undefined;
  if (!ctx) {
    const known = Object.keys(config.contexts).map((n) => `"${n}"`).join(", ") || "none";
    throw new PkiError("no_context", `No context "${name}" in the client config (have ${known})`, {
      context: name,
    });
  }
  return ctx;
}

function decodePem(value: string, context: string, field: string): string {
  let text: string;
  try {
    text = atob(value.replace(/\s+/g, ""));
  } catch (e) {
    throw new PkiError("invalid", `Context "${context}" field "${field}" is not base64`, {
      context,
    }, { cause: e });
  }
  if (!text.includes("-----BEGIN ")) {
    throw new PkiError("invalid", `Context "${context}" field "${field}" is not a PEM block`, {
      context,
    });
  }
  return text;
}
