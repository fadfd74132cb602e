/**
 * Time and kernel resource specs ⇄ their proto messages (time.proto,
 * kernel.proto): `null` becomes an unset optional field, unions become enums.
 */
import { create } from "@bufbuild/protobuf";
import * as kpb from "../gen/machined/v1/kernel_pb.ts";
import * as tpb from "../gen/machined/v1/time_pb.ts";
import type {
  KernelModuleStatusSpec,
  KernelParamStatusSpec,
  TimeStatusSpec,
} from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";

const correction = enumPair<NonNullable<TimeStatusSpec["correction"]>, tpb.TimeCorrection>({
  step: tpb.TimeCorrection.STEP,
  slew: tpb.TimeCorrection.SLEW,
}, "time correction");
const moduleState = enumPair<KernelModuleStatusSpec["state"], kpb.KernelModuleState>({
  loaded: kpb.KernelModuleState.LOADED,
  builtin: kpb.KernelModuleState.BUILTIN,
  "already-loaded": kpb.KernelModuleState.ALREADY_LOADED,
  failed: kpb.KernelModuleState.FAILED,
}, "kernel module state");

/** TimeStatus → proto. */
export function timeStatusToProto(s: TimeStatusSpec): tpb.TimeStatusSpec {
  return create(tpb.TimeStatusSpecSchema, {
    disabled: s.disabled,
    synced: s.synced,
    server: s.server,
    address: s.address,
    offsetMs: s.offsetMs ?? undefined,
    delayMs: s.delayMs ?? undefined,
    stratum: s.stratum ?? undefined,
    correction: s.correction ? correction.to(s.correction) : tpb.TimeCorrection.UNSPECIFIED,
    lastSync: s.lastSync ?? undefined,
    syncCount: s.syncCount,
    nextSync: s.nextSync ?? undefined,
    lastError: s.lastError,
  });
}

/** Proto → TimeStatus. */
export function timeStatusFromProto(m: tpb.TimeStatusSpec): TimeStatusSpec {
  return {
    disabled: m.disabled,
    synced: m.synced,
    server: m.server,
    address: m.address,
    offsetMs: m.offsetMs ?? null,
    delayMs: m.delayMs ?? null,
    stratum: m.stratum ?? null,
    correction: m.correction === tpb.TimeCorrection.UNSPECIFIED
      ? null
      : correction.from(m.correction),
    lastSync: m.lastSync ?? null,
    syncCount: m.syncCount,
    nextSync: m.nextSync ?? null,
    lastError: m.lastError,
  };
}

/** KernelModuleStatus → proto. */
export function kernelModuleStatusToProto(s: KernelModuleStatusSpec): kpb.KernelModuleStatusSpec {
  return create(kpb.KernelModuleStatusSpecSchema, {
    ...s,
    state: moduleState.to(s.state),
    parameters: [...s.parameters],
    inForce: [...s.inForce],
    dependencies: [...s.dependencies],
    loadedDependencies: [...s.loadedDependencies],
  });
}

/** Proto → KernelModuleStatus. */
export function kernelModuleStatusFromProto(m: kpb.KernelModuleStatusSpec): KernelModuleStatusSpec {
  return {
    name: m.name,
    state: moduleState.from(m.state),
    parameters: [...m.parameters],
    inForce: [...m.inForce],
    dependencies: [...m.dependencies],
    loadedDependencies: [...m.loadedDependencies],
    configured: m.configured,
    error: m.error,
    message: m.message,
  };
}

/** KernelParamStatus → proto. */
export function kernelParamStatusToProto(s: KernelParamStatusSpec): kpb.KernelParamStatusSpec {
  return create(kpb.KernelParamStatusSpecSchema, {
    key: s.key,
    desired: s.desired,
    current: s.current ?? undefined,
    default: s.default ?? undefined,
    applied: s.applied,
    error: s.error,
  });
}

/** Proto → KernelParamStatus. */
export function kernelParamStatusFromProto(m: kpb.KernelParamStatusSpec): KernelParamStatusSpec {
  return {
    key: m.key,
    desired: m.desired,
    current: m.current ?? null,
    default: m.default ?? null,
    applied: m.applied,
    error: m.error,
  };
}
