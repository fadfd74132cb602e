/**
 * Who may call what: the role each RPC needs (from the client certificate's
 * O=) and how a verified caller crosses the apid → machined socket.
 *
 * @example
 * ```ts
 * import { authorize } from "./api/auth/mod.ts";
 * authorize("os:reader", "machined.v1.MachineService", "Reboot"); // throws PermissionDenied
 * ```
 * @module
 */
export {
  authorize,
  isAllowed,
  isMutating,
  type MachineMethod,
  METHOD_ROLES,
  MUTATING,
  neededRole,
  OPEN_SERVICES,
  roleSatisfies,
} from "./rbac.ts";
export {
  type CallerIdentity,
  callerKey,
  IDENTITY_HEADERS,
  identityFromHeaders,
  identityToHeaders,
} from "./identity.ts";
export { authorizeMaintenance, MAINTENANCE_METHODS } from "./maintenance.ts";
export { authorizeTimeServer } from "./rbac.ts";
export {
  redactArgv,
  REDACTED,
  redactEnv,
  REDACTIONS,
  redactMachineConfig,
  redactResource,
  redactServiceSpec,
  type Visibility,
  visibilityOf,
} from "./redaction.ts";
