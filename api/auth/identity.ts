/**
 * Who is calling, and how that crosses the apid → machined Unix socket: apid
 * verifies the client certificate and forwards the identity in headers, which
 * machined trusts only because the socket is reachable by apid's user alone.
 */
import { createContextKey } from "@connectrpc/connect";
import { isRole, type Role } from "../../pki/mod.ts";

/** A verified caller. */
export interface CallerIdentity {
  /** Certificate CN. */
  readonly name: string;
  readonly role: Role;
  /** Certificate serial (hex), for audit logs. */
  readonly serialNumber: string;
  /**
   * A caller without a client certificate, on a node in maintenance mode
   * (api/auth/maintenance.ts decides what it may call; `role` is not used).
   */
  readonly maintenance?: boolean;
}

/** Header names apid sets on forwarded calls; machined strips nothing else. */
export const IDENTITY_HEADERS = {
  role: "x-machined-role",
  name: "x-machined-identity",
  serial: "x-machined-serial",
  /** `1` for a maintenance-mode caller without a client certificate. */
  maintenance: "x-machined-maintenance",
} as const;

/** Context key holding the caller identity inside handlers. */
export const callerKey = createContextKey<CallerIdentity | undefined>(undefined, {
  description: "machined API caller",
});

/** Writes an identity into forwarded-call headers. */
export function identityToHeaders(identity: CallerIdentity, headers: Headers): void {
  headers.set(IDENTITY_HEADERS.role, identity.role);
  headers.set(IDENTITY_HEADERS.name, encodeURIComponent(identity.name));
  headers.set(IDENTITY_HEADERS.serial, identity.serialNumber);
  if (identity.maintenance) headers.set(IDENTITY_HEADERS.maintenance, "1");
  else headers.delete(IDENTITY_HEADERS.maintenance);
}

/** Reads an identity from forwarded-call headers; undefined when absent or invalid. */
export function identityFromHeaders(
  get: (name: string) => string | null | undefined,
): CallerIdentity | undefined {
  const role = get(IDENTITY_HEADERS.role);
  if (!isRole(role)) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(get(IDENTITY_HEADERS.name) ?? "");
  } catch {
    return undefined;
  }
  const serialNumber = get(IDENTITY_HEADERS.serial) ?? "";
  if (get(IDENTITY_HEADERS.maintenance) === "1") {
    return { role, name, serialNumber, maintenance: true };
  }
  return { role, name, serialNumber };
}
