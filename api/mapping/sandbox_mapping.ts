/**
 * A service's sandbox ⇄ proto (api/proto/machined/v1/services.proto): the
 * ServiceSpec's requested sandbox and the ServiceStatus's sandbox in force.
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/services_pb.ts";
import type { ServiceSandboxSpec, ServiceSandboxStatus } from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";

const profile = enumPair<ServiceSandboxSpec["seccomp"], pb.SeccompProfile>({
  default: pb.SeccompProfile.DEFAULT,
  unconfined: pb.SeccompProfile.UNCONFINED,
}, "seccomp profile");

const MODES: readonly ServiceSandboxStatus["seccomp"][] = ["disabled", "strict", "filter"];

/** ServiceSpec's sandbox → proto. */
export function sandboxSpecToProto(s: ServiceSandboxSpec): pb.ServiceSandbox {
  return create(pb.ServiceSandboxSchema, {
    seccomp: profile.to(s.seccomp),
    capabilities: [...(s.capabilities ?? [])],
    keepAllCapabilities: s.capabilities === null,
    noNewPrivs: s.noNewPrivs,
    readOnlyPaths: [...(s.readOnlyPaths ?? [])],
  });
}

/** Proto → ServiceSpec's sandbox. @throws ResourceMappingError for an unknown profile. */
export function sandboxSpecFromProto(m: pb.ServiceSandbox): ServiceSandboxSpec {
  return {
    seccomp: profile.from(m.seccomp),
    capabilities: m.keepAllCapabilities ? null : [...m.capabilities],
    noNewPrivs: m.noNewPrivs,
    ...(m.readOnlyPaths.length > 0 ? { readOnlyPaths: [...m.readOnlyPaths] } : {}),
  };
}

/** ServiceStatus's sandbox in force → proto. */
export function sandboxStatusToProto(s: ServiceSandboxStatus): pb.SandboxInForce {
  return create(pb.SandboxInForceSchema, {
    profile: profile.to(s.profile),
    seccomp: s.seccomp,
    noNewPrivs: s.noNewPrivs,
    effective: [...s.effective],
    bounding: [...s.bounding],
    ambient: [...s.ambient],
    readOnly: [...(s.readOnly ?? [])],
  });
}

/** Proto → ServiceStatus's sandbox in force. @throws ResourceMappingError for an unknown profile. */
export function sandboxStatusFromProto(m: pb.SandboxInForce): ServiceSandboxStatus {
  return {
    profile: profile.from(m.profile),
    seccomp: MODES.find((x) => x === m.seccomp) ?? "filter",
    noNewPrivs: m.noNewPrivs,
    effective: [...m.effective],
    bounding: [...m.bounding],
    ambient: [...m.ambient],
    ...(m.readOnly.length > 0 ? { readOnly: [...m.readOnly] } : {}),
  };
}
