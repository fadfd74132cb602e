/**
 * TrustedRootsStatus ⇄ its proto message (trust.proto): field for field.
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/trust_pb.ts";
import type { TrustedRootsStatusSpec } from "../../resources/mod.ts";

/** TrustedRootsStatus → proto. */
export function trustedRootsStatusToProto(s: TrustedRootsStatusSpec): pb.TrustedRootsStatusSpec {
  return create(pb.TrustedRootsStatusSpecSchema, {
    ...s,
    roots: s.roots.map((r) => create(pb.TrustedRootStatusSchema, r)),
  });
}

/** Proto → TrustedRootsStatus. */
export function trustedRootsStatusFromProto(m: pb.TrustedRootsStatusSpec): TrustedRootsStatusSpec {
  return {
    path: m.path,
    sha256: m.sha256,
    systemBundle: m.systemBundle,
    systemCertificates: m.systemCertificates,
    systemError: m.systemError,
    roots: m.roots.map((r) => ({
      name: r.name,
      subject: r.subject,
      fingerprint: r.fingerprint,
      notAfter: r.notAfter,
    })),
  };
}
