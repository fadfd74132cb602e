/**
 * Which paths of the node each role may list and read: a pure decision,
 * pinned by roots_test.ts. Talos's `ls`/`cat` let an admin read anything;
 * here a reader sees only logs and STATE (secrets redacted, state_redaction.ts),
 * and operators and admins a documented allow-list of the node's own
 * directories. Block devices, FIFOs and sockets are never read (access.ts).
 */
import { InvalidArgumentError, PermissionDeniedError } from "../../errors/mod.ts";
import type { Role } from "../../../pki/mod.ts";
import { roleSatisfies } from "../../auth/mod.ts";

/** What a reader may list and read. */
export const READER_ROOTS: readonly string[] = ["/var/log", "/system/state"];

/** What operators and admins may list and read. */
export const PRIVILEGED_ROOTS: readonly string[] = [
  "/var",
  "/system",
  "/etc",
  "/run",
  "/proc",
  "/sys",
];

/** Where secrets are redacted for every role (state_redaction.ts). */
export const REDACTED_ROOT = "/system/state";

/** The roots `role` may see; no role at all sees what a reader sees. */
export function allowedRoots(role: Role | undefined): readonly string[] {
  return role !== undefined && roleSatisfies(role, "os:operator") ? PRIVILEGED_ROOTS : READER_ROOTS;
}

/** A request path checked against the roots: normalized, and the root it lies under. */
export interface AllowedPath {
  /** Absolute, no trailing slash, no empty, `.` or `..` segment. */
  readonly path: string;
  readonly root: string;
}

/**
 * `path` normalized and the allowed root of `role` it lies under. Pure.
 * @throws InvalidArgumentError for a relative path, a NUL or a `..`/`.` segment;
 *   PermissionDenied naming the role's roots for a path outside them.
 */
export function checkPath(role: Role | undefined, path: string): AllowedPath {
  if (!path.startsWith("/") || path.includes("\0")) {
    throw new InvalidArgumentError(`path must be absolute: ${JSON.stringify(path)}`, {
      context: { path },
    });
  }
  const segments = path.split("/").filter((s) => s !== "");
  if (segments.some((s) => s === ".." || s === ".")) {
    throw new InvalidArgumentError(
      `path must not contain "." or ".." segments: ${JSON.stringify(path)}`,
      { context: { path } },
    );
  }
  const norm = "/" + segments.join("/");
  const roots = allowedRoots(role);
  const root = roots.find((r) => norm === r || norm.startsWith(r + "/"));
  if (root === undefined) {
    throw new PermissionDeniedError(
      `Role "${role ?? "none"}" may list and read only under ${roots.join(", ")}: ` +
        `${JSON.stringify(norm)} is outside` +
        (roots === READER_ROOTS
          ? ` (os:operator or higher sees ${PRIVILEGED_ROOTS.join(", ")})`
          : ""),
      { context: { role, path: norm } },
    );
  }
  return { path: norm, root };
}
