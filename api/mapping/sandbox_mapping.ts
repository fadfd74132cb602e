/**
 * A service's sandbox ⇄ proto (api/proto/machined/v1/services.proto): the
 * ServiceSpec's requested sandbox and the ServiceStatus's sandbox in force. A
 * configured OCI profile travels as SECCOMP_PROFILE_NAMED with its name (and,
 * in the spec, its content).
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/services_pb.ts";
import type { ServiceSandboxSpec, ServiceSandboxStatus } from "../../resources/mod.ts";
import type {
  OciSeccompProfile,
  SeccompAction,
  SeccompComparison,
} from "../../platform/process/mod.ts";
import { ResourceMappingError } from "./mapping_error.ts";

const MODES: readonly ServiceSandboxStatus["seccomp"][] = ["disabled", "strict", "filter"];

function profileToProto(name: string): { seccomp: pb.SeccompProfile; profileName: string } {
  if (name === "default") return { seccomp: pb.SeccompProfile.DEFAULT, profileName: "" };
  if (name === "unconfined") return { seccomp: pb.SeccompProfile.UNCONFINED, profileName: "" };
  return { seccomp: pb.SeccompProfile.NAMED, profileName: name };
}

function profileFromProto(p: pb.SeccompProfile, name: string): string {
  switch (p) {
    case pb.SeccompProfile.DEFAULT:
      return "default";
    case pb.SeccompProfile.UNCONFINED:
      return "unconfined";
    case pb.SeccompProfile.NAMED:
      if (name) return name;
  }
  throw new ResourceMappingError(
    "seccomp",
    `unknown seccomp profile ${p} ${JSON.stringify(name)}`,
  );
}

function ociToProto(p: OciSeccompProfile): pb.OciSeccompProfile {
  return create(pb.OciSeccompProfileSchema, {
    defaultAction: p.defaultAction,
    defaultErrnoRet: p.defaultErrnoRet,
    architectures: [...p.architectures],
    syscalls: p.syscalls.map((r) =>
      create(pb.OciSeccompRuleSchema, {
        names: [...r.names],
        action: r.action,
        errnoRet: r.errnoRet,
        args: r.args.map((a) =>
          create(pb.OciSeccompArgSchema, {
            index: a.index,
            value: BigInt(a.value),
            valueTwo: BigInt(a.valueTwo),
            op: a.op,
          })
        ),
      })
    ),
  });
}

function ociFromProto(m: pb.OciSeccompProfile): OciSeccompProfile {
  return {
    defaultAction: m.defaultAction as SeccompAction,
    ...(m.defaultErrnoRet !== undefined ? { defaultErrnoRet: m.defaultErrnoRet } : {}),
    architectures: [...m.architectures],
    syscalls: m.syscalls.map((r) => ({
      names: [...r.names],
      action: r.action as SeccompAction,
      ...(r.errnoRet !== undefined ? { errnoRet: r.errnoRet } : {}),
      args: r.args.map((a) => ({
        index: a.index,
        value: Number(a.value),
        valueTwo: Number(a.valueTwo),
        op: a.op as SeccompComparison,
      })),
    })),
  };
}

/** ServiceSpec's sandbox → proto. */
export function sandboxSpecToProto(s: ServiceSandboxSpec): pb.ServiceSandbox {
  return create(pb.ServiceSandboxSchema, {
    ...profileToProto(s.seccomp),
    capabilities: [...(s.capabilities ?? [])],
    keepAllCapabilities: s.capabilities === null,
    noNewPrivs: s.noNewPrivs,
    readOnlyPaths: [...(s.readOnlyPaths ?? [])],
    maskedPaths: [...(s.maskedPaths ?? [])],
    ...(s.profile ? { profile: ociToProto(s.profile) } : {}),
  });
}

/** Proto → ServiceSpec's sandbox. @throws ResourceMappingError for an unknown profile. */
export function sandboxSpecFromProto(m: pb.ServiceSandbox): ServiceSandboxSpec {
  return {
    seccomp: profileFromProto(m.seccomp, m.profileName),
    capabilities: m.keepAllCapabilities ? null : [...m.capabilities],
    noNewPrivs: m.noNewPrivs,
    ...(m.readOnlyPaths.length > 0 ? { readOnlyPaths: [...m.readOnlyPaths] } : {}),
    ...(m.maskedPaths.length > 0 ? { maskedPaths: [...m.maskedPaths] } : {}),
    ...(m.profile ? { profile: ociFromProto(m.profile) } : {}),
  };
}

/** ServiceStatus's sandbox in force → proto. */
export function sandboxStatusToProto(s: ServiceSandboxStatus): pb.SandboxInForce {
  const p = profileToProto(s.profile);
  return create(pb.SandboxInForceSchema, {
    profile: p.seccomp,
    profileName: p.profileName,
    seccomp: s.seccomp,
    noNewPrivs: s.noNewPrivs,
    effective: [...s.effective],
    bounding: [...s.bounding],
    ambient: [...s.ambient],
    readOnly: [...(s.readOnly ?? [])],
    masked: [...(s.masked ?? [])],
  });
}

/** Proto → ServiceStatus's sandbox in force. @throws ResourceMappingError for an unknown profile. */
export function sandboxStatusFromProto(m: pb.SandboxInForce): ServiceSandboxStatus {
  return {
    profile: profileFromProto(m.profile, m.profileName),
    seccomp: MODES.find((x) => x === m.seccomp) ?? "filter",
    noNewPrivs: m.noNewPrivs,
    effective: [...m.effective],
    bounding: [...m.bounding],
    ambient: [...m.ambient],
    ...(m.readOnly.length > 0 ? { readOnly: [...m.readOnly] } : {}),
    ...(m.masked.length > 0 ? { masked: [...m.masked] } : {}),
  };
}
