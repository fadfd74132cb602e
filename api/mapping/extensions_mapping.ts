/**
 * ExtensionStatus ⇄ its proto message (extensions.proto): field for field; a state the
 * node does not know reads as `unknown`.
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/extensions_pb.ts";
import type { ExtensionState, ExtensionStatusSpec } from "../../resources/mod.ts";

const STATES: readonly ExtensionState[] = ["mounted", "refused", "unknown"];

/** ExtensionStatus → proto. */
export function extensionStatusToProto(s: ExtensionStatusSpec): pb.ExtensionStatusSpec {
  return create(pb.ExtensionStatusSpecSchema, { ...s, size: BigInt(s.size) });
}

/** Proto → ExtensionStatus. */
export function extensionStatusFromProto(m: pb.ExtensionStatusSpec): ExtensionStatusSpec {
  return {
    name: m.name,
    version: m.version,
    sha256: m.sha256,
    size: Number(m.size),
    state: (STATES as readonly string[]).includes(m.state) ? m.state as ExtensionState : "unknown",
    mountPoint: m.mountPoint,
    reason: m.reason,
  };
}
