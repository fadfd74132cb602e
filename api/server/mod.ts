/**
 * machined's side of the API: MachineService over the store and node actions,
 * served to the edge on a Unix socket. machined-edge (api/edge/) terminates mutual TLS and
 * forwards here.
 *
 * @example
 * ```ts
 * import { createClientConfigIssuer, startInternalApiServer } from "./api/server/mod.ts";
 * import { EventBus } from "./events/mod.ts";
 * declare const store: import("./resources/mod.ts").MachineStore;
 * declare const actions: import("./api/server/mod.ts").NodeActions;
 * declare const ca: import("./pki/mod.ts").CertificateAuthority;
 * const events = new EventBus();
 * const server = await startInternalApiServer({
 *   socketPath: "/run/machined/machined-api.sock",
 *   // services, logs, kernelLog and configs are optional (Unimplemented when absent).
 *   deps: { store, actions, events, clientConfigs: createClientConfigIssuer(ca, () => ["10.0.0.5"]) },
 * });
 * await server.close();
 * ```
 * @module
 */
export {
  type ActionRequester,
  type NodeActions,
  type RebootMode,
  type ResetAnswer,
  type ResetMode,
  type ResetPartitionInfo,
  ResetRefusedError,
  type ResetRequestData,
  type RollbackAnswer,
  UnlockRefusedError,
  type UnlockVolumeAnswer,
  type UpgradeAnswer,
  UpgradeRefusedError,
  type VersionInfo,
} from "./node_actions.ts";
export {
  UNLOCK_ATTEMPTS_PER_CLIENT,
  UNLOCK_ATTEMPTS_PER_NODE,
  UNLOCK_WINDOW_MS,
  UnlockBudget,
} from "./unlock_budget.ts";
export {
  createImagePullHandler,
  imageRefProblem,
  MAX_IMAGE_REF_BYTES,
  PULL_TIMEOUT_MS,
  PULLS_IN_FLIGHT,
} from "./image_pull_handler.ts";
export type { EventSource } from "./event_source.ts";
export {
  clientCertLifetimeMs,
  type ClientConfigIssuer,
  createClientConfigIssuer,
  type IssueClientConfigParams,
  type IssuedClientConfig,
  MAX_API_CLIENT_CERT_LIFETIME_MS,
} from "./client_config_issuer.ts";
export { type AuditLog, createAuditInterceptor } from "./audit.ts";
export { apiEndpoints, nodeApiEndpoints } from "./node_endpoints.ts";
export { codeOf, errorMappingInterceptor, toConnectError } from "./errors.ts";
export {
  isUnknownIdError,
  type LogEntry,
  type LogSource,
  type LogSourceReadOptions,
  type ServiceControl,
  type ServiceView,
  UNKNOWN_ID_ERROR_NAMES,
} from "./service_control.ts";
export {
  type KernelLog,
  type KernelLogGap,
  type KernelLogReadOptions,
  type KernelLogRecord,
  readKernelLog,
  type ReadKernelLogOptions,
} from "./kernel_log.ts";
export {
  ApplyRefusedError,
  type ConfigApplier,
  type ConfigApplyOptions,
  type ConfigApplyResult,
  ConfigBaseChangedError,
  configRejectionMessage,
  formatConfigIssue,
} from "./config_applier.ts";
export { createNodeServiceHandlers, type NodeServiceDeps } from "./node_service_handlers.ts";
export {
  ALL_NAMESPACES,
  createMachineService,
  type MachineServiceDeps,
  requireType,
} from "./machine_service.ts";
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  type InternalApiServer,
  type InternalApiServerOptions,
  startInternalApiServer,
} from "./internal_server.ts";
export { createReflectionIndex, type ReflectionIndex } from "./reflection.ts";
export {
  FILE_COPY_MAX_BYTES,
  FILE_DEADLINE_MS,
  FILE_LIST_MAX_DEPTH,
  FILE_LIST_MAX_ENTRIES,
  FILE_READ_MAX_BYTES,
} from "./files/budgets.ts";
export type { FileBounds } from "./files/budgets.ts";
export type { MaintenanceGate } from "./maintenance_gate.ts";
export { createTokenBucket, NTP_PORT } from "./time_query.ts";
export type { TimeQuerier, TimeSample, TokenBucket } from "./time_query.ts";
export { WATCH_PATH } from "./watch_route.ts";
