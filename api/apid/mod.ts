/**
 * apid, the API front end process, and how machined runs it: the mTLS server
 * (`startApidServer`), its command line (`parseApidArgs`, `apidArgs`,
 * `apidPermissionFlags`), the ProcessSpec that launches it (`apidProcessSpec`)
 * and the supervisor that keeps it running (`ApidSupervisor`).
 *
 * @example
 * ```ts
 * import { APID_DEFAULTS, ApidSupervisor, apidProcessSpec } from "./api/apid/mod.ts";
 * import { nativeProcessBackend } from "./platform/process/mod.ts";
 * const supervisor = new ApidSupervisor({
 *   backend: nativeProcessBackend(),
 *   spec: apidProcessSpec({
 *     apid: {
 *       ...APID_DEFAULTS,
 *       pkiDir: "/system/state/pki",
 *       socketPath: "/system/run/machined/api.sock",
 *     },
 *     dropUser: true,
 *   }),
 * });
 * supervisor.start();
 * await supervisor.stop();
 * ```
 * @module
 */
export {
  type ApidServer,
  type ApidServerOptions,
  DEFAULT_API_PORT,
  startApidServer,
} from "./apid_server.ts";
export {
  APID_DEFAULTS,
  apidArgs,
  type ApidOptions,
  apidPermissionFlags,
  parseApidArgs,
} from "./apid_options.ts";
export {
  APID_GID,
  APID_UID,
  apidProcessSpec,
  type ApidProcessSpecOptions,
} from "./apid_process_spec.ts";
export {
  ApidSupervisor,
  type ApidSupervisorEvent,
  type ApidSupervisorOptions,
} from "./supervisor.ts";
export { type ApidPki, loadApidPki } from "./load_apid_pki.ts";
export { type ApidGrant, apidGrants, dropPrivileges, type PrivilegeReport } from "./privileges.ts";
export { createPeerVerifier, type PeerVerifier } from "./peer_identity.ts";
export { createReflectionIndex, type ReflectionIndex } from "./reflection.ts";
export { createForwardingService, createUpstreamTransport } from "./forwarder.ts";
