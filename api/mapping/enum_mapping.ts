/**
 * Two-way tables between the TypeScript string unions of the resource specs and
 * the proto enums. Each table is typed over the whole union, so a new member
 * fails type-checking here; reverse lookups reject UNSPECIFIED and unknown numbers.
 */
import {
  ApplyMode as ProtoApplyMode,
  ConfigState,
  ControllerState,
  MachineMode,
  MachineStage,
  Phase,
} from "../gen/machined/v1/resources_pb.ts";
import { Role as ProtoRole } from "../gen/machined/v1/machine_pb.ts";
import type {
  ApplyMode,
  ConfigStatusSpec,
  ControllerStatusSpec,
  MachineStage as Stage,
  MachineStatusSpec,
} from "../../resources/mod.ts";
import type { Phase as StorePhase } from "../../runtime/mod.ts";
import type { Role } from "../../pki/mod.ts";
import { ResourceMappingError } from "./mapping_error.ts";

type EnumTable<T extends string, E extends number> = { readonly [K in T]: E };

function reverse<T extends string, E extends number>(
  table: EnumTable<T, E>,
  what: string,
): (value: E) => T {
  const back = new Map<number, T>(Object.entries(table).map(([k, v]) => [v as number, k as T]));
  return (value) => {
    const found = back.get(value);
    if (found === undefined) throw new ResourceMappingError(what, `Unknown ${what} ${value}`);
    return found;
  };
}

const PHASES: EnumTable<StorePhase, Phase> = {
  running: Phase.RUNNING,
  tearingDown: Phase.TEARING_DOWN,
};
/** Store phase → proto. */
export const phaseToProto = (p: StorePhase): Phase => PHASES[p];
/** Proto → store phase. @throws ResourceMappingError */
export const phaseFromProto: (p: Phase) => StorePhase = reverse(PHASES, "phase");

const CONFIG_STATES: EnumTable<ConfigStatusSpec["state"], ConfigState> = {
  valid: ConfigState.VALID,
  invalid: ConfigState.INVALID,
  missing: ConfigState.MISSING,
};
/** Config state → proto. */
export const configStateToProto = (s: ConfigStatusSpec["state"]): ConfigState => CONFIG_STATES[s];
/** Proto → config state. @throws ResourceMappingError */
export const configStateFromProto: (s: ConfigState) => ConfigStatusSpec["state"] = reverse(
  CONFIG_STATES,
  "config state",
);

const APPLY_MODES: EnumTable<ApplyMode, ProtoApplyMode> = {
  auto: ProtoApplyMode.AUTO,
  "no-reboot": ProtoApplyMode.NO_REBOOT,
  reboot: ProtoApplyMode.REBOOT,
  staged: ProtoApplyMode.STAGED,
  try: ProtoApplyMode.TRY,
};
/** Apply mode → proto. */
export const applyModeToProto = (m: ApplyMode): ProtoApplyMode => APPLY_MODES[m];
const applyModeBack = reverse(APPLY_MODES, "apply mode");
/** Proto → apply mode; UNSPECIFIED is `auto`. @throws ResourceMappingError */
export const applyModeFromProto = (m: ProtoApplyMode): ApplyMode =>
  m === ProtoApplyMode.UNSPECIFIED ? "auto" : applyModeBack(m);

const STAGES: EnumTable<Stage, MachineStage> = {
  booting: MachineStage.BOOTING,
  running: MachineStage.RUNNING,
  maintenance: MachineStage.MAINTENANCE,
  rebooting: MachineStage.REBOOTING,
  shuttingDown: MachineStage.SHUTTING_DOWN,
};
/** Machine stage → proto. */
export const machineStageToProto = (s: Stage): MachineStage => STAGES[s];
/** Proto → machine stage. @throws ResourceMappingError */
export const machineStageFromProto: (s: MachineStage) => Stage = reverse(STAGES, "machine stage");

const MODES: EnumTable<MachineStatusSpec["mode"], MachineMode> = {
  node: MachineMode.NODE,
  dev: MachineMode.DEV,
};
/** Machine mode → proto. */
export const machineModeToProto = (m: MachineStatusSpec["mode"]): MachineMode => MODES[m];
/** Proto → machine mode. @throws ResourceMappingError */
export const machineModeFromProto: (m: MachineMode) => MachineStatusSpec["mode"] = reverse(
  MODES,
  "machine mode",
);

const CONTROLLER_STATES: EnumTable<ControllerStatusSpec["state"], ControllerState> = {
  idle: ControllerState.IDLE,
  running: ControllerState.RUNNING,
  backoff: ControllerState.BACKOFF,
  stopped: ControllerState.STOPPED,
};
/** Controller state → proto. */
export const controllerStateToProto = (s: ControllerStatusSpec["state"]): ControllerState =>
  CONTROLLER_STATES[s];
/** Proto → controller state. @throws ResourceMappingError */
export const controllerStateFromProto: (s: ControllerState) => ControllerStatusSpec["state"] =
  reverse(CONTROLLER_STATES, "controller state");

const ROLES: EnumTable<Role, ProtoRole> = {
  "os:admin": ProtoRole.ADMIN,
  "os:operator": ProtoRole.OPERATOR,
  "os:reader": ProtoRole.READER,
};
/** API role → proto. */
export const roleToProto = (r: Role): ProtoRole => ROLES[r];
/** Proto → API role. @throws ResourceMappingError for UNSPECIFIED or an unknown number. */
export const roleFromProto: (r: ProtoRole) => Role = reverse(ROLES, "role");
