/**
 * apid, the network-facing API process, as machined runs it: what it is told
 * (`ApidOptions`, `apidArgs`, the limits from `machine.api`), the user it runs
 * as, the supervisor that keeps it running (`ApidSupervisor`) and the PKI
 * directory it reads (`loadApidPki`). The program itself is machined-edge
 * (native-ops/edge/, started by api/edge/); the pieces machined's internal
 * server shares with it (peer identity from the edge's headers, reflection,
 * the send gate, decode errors) live here too.
 *
 * @example
 * ```ts
 * import { APID_DEFAULTS, ApidSupervisor } from "./api/apid/mod.ts";
 * import { edgeProcessSpec } from "./api/edge/mod.ts";
 * import { nativeProcessBackend } from "./platform/process/mod.ts";
 * const supervisor = new ApidSupervisor({
 *   backend: nativeProcessBackend(),
 *   spec: edgeProcessSpec({
 *     apid: {
 *       ...APID_DEFAULTS,
 *       pkiDir: "/run/machined/apid-pki",
 *       socketPath: "/run/machined/machined-api.sock",
 *     },
 *     dropUser: true,
 *   }),
 * });
 * supervisor.start();
 * await supervisor.stop();
 * ```
 * @module
 */
export { APID_DEFAULTS, apidArgs, type ApidOptions } from "./apid_options.ts";
export { APID_GID, APID_UID } from "./apid_process_spec.ts";
export {
  ApidSupervisor,
  type ApidSupervisorEvent,
  type ApidSupervisorOptions,
} from "./supervisor.ts";
export { type ApidPki, loadApidPki } from "./load_apid_pki.ts";
export { createPeerVerifier, type PeerVerifier } from "./peer_identity.ts";
export { createReflectionIndex, type ReflectionIndex } from "./reflection.ts";
