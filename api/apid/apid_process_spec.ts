/**
 * How machined runs apid: the Deno binary with only the permissions apid
 * needs and apid's V8 flags (boot/v8_flags.ts), as the unprivileged
 * `machined-api` user on a node, with no inherited environment and no new
 * privileges.
 */
import { fileURLToPath as fromFileUrl } from "node:url";
import { APID_V8_FLAGS, v8FlagsArgs } from "../../boot/v8_flags.ts";
import type { ProcessSpec } from "../../platform/process/mod.ts";
import { apidArgs, type ApidOptions, apidPermissionFlags } from "./apid_options.ts";

/** apid's user and group on a node. */
export const APID_UID = 50000;
/** @see APID_UID */
export const APID_GID = 50000;

/** Options of {@link apidProcessSpec}. */
export interface ApidProcessSpecOptions {
  readonly apid: ApidOptions;
  /** @default Deno.execPath() */
  readonly denoPath?: string;
  /** @default api/apid/main.ts next to this file */
  readonly entry?: string;
  /** deno.json giving the import map; null for a bundled program (`--no-config`). @default the repository's */
  readonly config?: string | null;
  /** Words between the entry and apid's flags, e.g. `["apid"]` for machined's bundled main.js. */
  readonly subcommand?: readonly string[];
  /** Run as machined-api (uid/gid 50000); off in dev mode and tests. @default false */
  readonly dropUser?: boolean;
  /** DENO_DIR, so apid finds the npm cache machined uses. */
  readonly denoDir?: string;
  /**
   * V8 flags (the image warms apid's code cache with the same ones).
   * @default APID_V8_FLAGS (boot/v8_flags.ts)
   */
  readonly v8Flags?: readonly string[];
}

/** The ProcessSpec that starts apid. Pure apart from defaults read from Deno. */
export function apidProcessSpec(o: ApidProcessSpecOptions): ProcessSpec {
  const entry = o.entry ?? fromFileUrl(new URL("./main.ts", import.meta.url));
  const config = o.config === null
    ? null
    : o.config ?? fromFileUrl(new URL("../../deno.json", import.meta.url));
  const env: Record<string, string> = { NO_COLOR: "1" };
  if (o.denoDir) env.DENO_DIR = o.denoDir;
  else if (Deno.env.get("DENO_DIR")) env.DENO_DIR = Deno.env.get("DENO_DIR")!;
  if (Deno.env.get("HOME")) env.HOME = Deno.env.get("HOME")!;
  return {
    argv: [
      o.denoPath ?? Deno.execPath(),
      "run",
      ...v8FlagsArgs(o.v8Flags ?? APID_V8_FLAGS),
      ...(config === null ? ["--no-config", "--no-lock"] : [`--config=${config}`, "--cached-only"]),
      ...apidPermissionFlags(o.apid),
      entry,
      ...(o.subcommand ?? []),
      ...apidArgs(o.apid),
    ],
    env,
    newSession: true,
    noNewPrivs: true,
    stdout: "pipe",
    stderr: "pipe",
    ...(o.dropUser ? { uid: APID_UID, gid: APID_GID, groups: [] } : {}),
  };
}
