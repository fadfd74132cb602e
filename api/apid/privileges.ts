/**
 * apid gives up what it no longer needs once its keys are in memory and its
 * port is bound. Deno 2.9.3 facts (measured, see docs/decisions.md): revoking
 * a path-scoped read works only when read was granted for paths (not with -A),
 * and connecting to a Unix socket needs read and write access to its path plus
 * `--allow-net=unix:<path>`, so those are kept for the socket alone.
 */

/** What {@link dropPrivileges} revoked and what stayed. */
export interface PrivilegeReport {
  readonly revoked: readonly string[];
  /** Permissions still granted after revocation (should be net and the socket). */
  readonly kept: readonly string[];
}

/**
 * Revoke run, ffi, env, sys, import and read of `pkiDir`. Returns what is
 * still granted so apid can log it.
 */
export async function dropPrivileges(pkiDir: string, socketPath: string): Promise<PrivilegeReport> {
  const revoke: Deno.PermissionDescriptor[] = [
    { name: "run" },
    { name: "ffi" },
    { name: "env" },
    { name: "sys" },
    { name: "read", path: pkiDir },
  ];
  const revoked: string[] = [];
  for (const d of revoke) {
    const status = await Deno.permissions.revoke(d);
    if (status.state !== "granted") revoked.push(describe(d));
  }
  const probes: Deno.PermissionDescriptor[] = [
    { name: "read", path: pkiDir },
    { name: "read", path: socketPath },
    { name: "write", path: socketPath },
    { name: "write", path: "/" },
    { name: "run" },
    { name: "net" },
  ];
  const kept: string[] = [];
  for (const d of probes) {
    if ((await Deno.permissions.query(d)).state === "granted") kept.push(describe(d));
  }
  return { revoked, kept };
}

function describe(d: Deno.PermissionDescriptor): string {
  return "path" in d && d.path ? `${d.name}:${d.path}` : d.name;
}
