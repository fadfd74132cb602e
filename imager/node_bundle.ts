/**
 * The node `deno task up` boots: its machine config, secrets (CA) and admin
 * client config live in one directory (build/node by default), generated on the
 * first run and reused after, so the same client certificate keeps working
 * across `up`/`down` cycles and image rebuilds.
 */
import { join } from "node:path";
import { parseMachineConfig } from "../config/mod.ts";
import { outdatedUpConfig, renderUpConfig } from "./up_config.ts";
import {
  addContext,
  BUNDLE_FILES,
  generateNodeBundle,
  pathExists,
  readClientConfig,
  resolveClientConfigPath,
  writeClientConfig,
} from "../pki/mod.ts";

/** Where the bundle's files are. */
export interface NodeBundlePaths {
  machineConfig: string;
  secrets: string;
  clientConfig: string;
}

/** What {@link ensureNodeBundle} found or made. */
export interface NodeBundle {
  paths: NodeBundlePaths;
  created: boolean;
  /**
   * Set when a reused bundle's machine config is not what `deno task up`
   * generates today (an older version made it): why, for the operator.
   */
  outdated?: string;
}

/**
 * Returns the bundle in `dir`, generating it (hostname `name`, endpoint
 * 127.0.0.1:`port`, config from {@link renderUpConfig}) when it does not
 * exist yet. A reused bundle is never rewritten (its CA and client
 * certificate keep working); an outdated one is reported in `outdated`.
 */
export async function ensureNodeBundle(
  dir: string,
  options: { name: string; port: number },
): Promise<NodeBundle> {
  const paths = {
    machineConfig: join(dir, BUNDLE_FILES.machineConfig),
    secrets: join(dir, BUNDLE_FILES.secrets),
    clientConfig: join(dir, BUNDLE_FILES.clientConfig),
  };
  if (await pathExists(paths.machineConfig)) {
    const text = await Deno.readTextFile(paths.machineConfig);
    const parsed = parseMachineConfig(text, paths.machineConfig);
    const outdated = parsed.ok ? outdatedUpConfig(parsed.config) : "it does not parse";
    return { paths, created: false, ...(outdated ? { outdated } : {}) };
  }
  await generateNodeBundle({
    name: options.name,
    endpoint: `127.0.0.1:${options.port}`,
    outDir: dir,
    renderMachineConfig: ({ ca }) => renderUpConfig({ name: options.name, ca }),
  });
  return { paths, created: true };
}

/**
 * Copies the node's admin context into the user's machinectl config
 * ($MACHINECTL_CONFIG, else $XDG_CONFIG_HOME/machinectl/config.yaml, else
 * ~/.config/machinectl/config.yaml) and makes it current,
 * replacing an older context of the same name. Returns the file written.
 */
export async function installContext(
  clientConfig: string,
  context: string,
  port: number,
): Promise<string> {
  const from = await readClientConfig(clientConfig);
  const ctx = from.contexts[from.context ?? context] ?? Object.values(from.contexts)[0];
  const target = resolveClientConfigPath(
    undefined,
    {
      MACHINECTL_CONFIG: Deno.env.get("MACHINECTL_CONFIG"),
      XDG_CONFIG_HOME: Deno.env.get("XDG_CONFIG_HOME"),
    },
    Deno.env.get("HOME") ?? "/root",
  );
  const into = await readClientConfig(target);
  await writeClientConfig(
    target,
    addContext(into, context, { ...ctx, endpoints: [`127.0.0.1:${port}`] }, { use: true }),
  );
  return target;
}
