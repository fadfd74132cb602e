/**
 * The Deno permissions apid is started with, and the one it gives up once its
 * keys are in memory and its port is bound. apid is spawned with nothing but
 * path-scoped read and write and host-scoped net (`apidPermissionFlags`
 * renders {@link apidGrants}), so run, ffi, env and sys are never granted and
 * there is nothing to revoke there. What apid drops: the read of its PKI
 * directory, and `import`, which Deno 2.9.3 grants wholesale, without a flag,
 * to a program run with `--cached-only` (how machined starts apid from a
 * checkout; the image's bundled apid runs without it and has no import grant).
 * Deno 2.9.3 facts (measured, see docs/decisions.md): revoking a path-scoped
 * read works only when read was granted for paths (not with -A), and
 * connecting to a Unix socket needs read and write access to its path plus
 * `--allow-net=unix:<path>`, so those are kept for the socket alone.
 */
import type { ApidOptions } from "./apid_options.ts";

/** One permission apid is started with. */
export type ApidGrant =
  | {
    readonly name: "read" | "write";
    readonly path: string;
    /** Revoked by {@link dropPrivileges} once apid serves. */
    readonly dropAfterStart: boolean;
  }
  | { readonly name: "net"; readonly host: string; readonly dropAfterStart: false };

/** Permission names queried without a scope to find what is granted wholesale. */
export const DENO_PERMISSION_NAMES = [
  "read",
  "write",
  "net",
  "env",
  "sys",
  "run",
  "ffi",
  "import",
] as const;

/**
 * Every permission apid is started with: read of the PKI directory (dropped
 * once loaded), read and write of machined's socket (connecting needs both),
 * net to listen on its host:port (host alone for port 0) and to the socket.
 * Pure; apidPermissionFlags renders this list, so the flags and
 * {@link dropPrivileges} cannot disagree.
 */
export function apidGrants(
  o: Pick<ApidOptions, "pkiDir" | "socketPath" | "hostname" | "port">,
): ApidGrant[] {
  const host = o.hostname.includes(":") ? `[${o.hostname}]` : o.hostname;
  return [
    { name: "read", path: o.pkiDir, dropAfterStart: true },
    { name: "read", path: o.socketPath, dropAfterStart: false },
    { name: "write", path: o.socketPath, dropAfterStart: false },
    { name: "net", host: o.port === 0 ? host : `${host}:${o.port}`, dropAfterStart: false },
    { name: "net", host: `unix:${o.socketPath}`, dropAfterStart: false },
  ];
}

/** Permissions apid never uses: revoked whenever Deno reports them granted wholesale. */
export const NEVER_NEEDED = ["env", "sys", "run", "ffi", "import"] as const;

/** What {@link dropPrivileges} revoked and what stayed, as Deno reports it afterwards. */
export interface PrivilegeReport {
  /** Grants that were in force and are not any more (`read:<pki>`, and `import` under --cached-only). */
  readonly revoked: readonly string[];
  /** Grants still in force, checked with Deno.permissions.query (the socket and the port). */
  readonly kept: readonly string[];
  /**
   * Permissions still granted wholesale (e.g. `read` under `-A`). Empty when
   * apid runs with its own flags; anything here means the flags were not apid's.
   */
  readonly unscoped: readonly string[];
}

/**
 * Revokes the grants marked `dropAfterStart` (the PKI directory's read) and
 * any {@link NEVER_NEEDED} permission Deno reports granted, and reports, from
 * Deno's own answers afterwards, what is gone, what is still granted and
 * whether anything is still granted without a scope. Nothing that is not
 * granted is revoked (or reported).
 */
export async function dropPrivileges(
  o: Pick<ApidOptions, "pkiDir" | "socketPath" | "hostname" | "port">,
): Promise<PrivilegeReport> {
  const grants = apidGrants(o);
  const granted = async (d: Deno.PermissionDescriptor) =>
    (await Deno.permissions.query(d)).state === "granted";
  const revoked: string[] = [];
  for (const g of grants.filter((g) => g.dropAfterStart)) {
    const d = descriptorOf(g);
    if (!(await granted(d))) continue;
    await Deno.permissions.revoke(d);
    if (!(await granted(d))) revoked.push(describe(g));
  }
  for (const name of NEVER_NEEDED) {
    if (!(await granted({ name }))) continue;
    await Deno.permissions.revoke({ name });
    if (!(await granted({ name }))) revoked.push(name);
  }
  const kept: string[] = [];
  for (const g of grants) if (await granted(descriptorOf(g))) kept.push(describe(g));
  const unscoped: string[] = [];
  for (const name of DENO_PERMISSION_NAMES) if (await granted({ name })) unscoped.push(name);
  return { revoked, kept, unscoped };
}

/** `read:/path` or `net:host:port`. */
export function describe(g: ApidGrant): string {
  return `${g.name}:${"path" in g ? g.path : g.host}`;
}

function descriptorOf(g: ApidGrant): Deno.PermissionDescriptor {
  return "path" in g ? { name: g.name, path: g.path } : { name: "net", host: g.host };
}
