/**
 * The mapping between machined's TypeScript resources and the API's proto
 * messages, in both directions: `toProto*` for the server, `fromProto*` for
 * clients such as machinectl (which renders tables from RESOURCE_DESCRIPTORS).
 *
 * @example
 * ```ts
 * import { fromProtoResource, toProtoResource } from "./api/mapping/mod.ts";
 * declare const resource: import("./resources/mod.ts").MachineResource;
 * const back = fromProtoResource(toProtoResource(resource)); // deep-equal to resource
 * ```
 * @module
 */
export { ResourceMappingError } from "./mapping_error.ts";
export { type AnyMachineResource, fromProtoResource, toProtoResource } from "./resource_mapping.ts";
export { watchEventFromProto, watchEventToProto } from "./watch_event_mapping.ts";
export { selectorFromProto, selectorToProto } from "./label_selector_mapping.ts";
export { serviceInfoFromProto, serviceInfoToProto } from "./services_mapping.ts";
export {
  kernelLogFromProto,
  kernelLogToProto,
  logEntryFromProto,
  logEntryToProto,
} from "./log_mapping.ts";
export { type EnumPair, enumPair } from "./enum_pair.ts";
export {
  applyModeFromProto,
  applyModeToProto,
  configStateFromProto,
  configStateToProto,
  controllerStateFromProto,
  controllerStateToProto,
  machineModeFromProto,
  machineModeToProto,
  machineStageFromProto,
  machineStageToProto,
  phaseFromProto,
  phaseToProto,
  roleFromProto,
  roleToProto,
} from "./enum_mapping.ts";
export { timeStatusToProto } from "./system_mapping.ts";
