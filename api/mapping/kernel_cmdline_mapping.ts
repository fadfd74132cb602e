/**
 * KernelCmdlineStatus ⇄ its proto message (kernel.proto): field for field, the state as an enum.
 */
import { create } from "@bufbuild/protobuf";
import * as kpb from "../gen/machined/v1/kernel_pb.ts";
import type { KernelCmdlineStatusSpec } from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";

const cmdlineState = enumPair<KernelCmdlineStatusSpec["state"], kpb.KernelCmdlineState>({
  booted: kpb.KernelCmdlineState.BOOTED,
  "pending-reboot": kpb.KernelCmdlineState.PENDING_REBOOT,
  "pending-upgrade": kpb.KernelCmdlineState.PENDING_UPGRADE,
  unwritable: kpb.KernelCmdlineState.UNWRITABLE,
}, "kernel command line state");

/** KernelCmdlineStatus → proto. */
export function kernelCmdlineStatusToProto(
  s: KernelCmdlineStatusSpec,
): kpb.KernelCmdlineStatusSpec {
  return create(kpb.KernelCmdlineStatusSpecSchema, {
    booted: s.booted,
    desiredAdd: [...s.desiredAdd],
    desiredRemove: [...s.desiredRemove],
    next: s.next,
    pending: [...s.pending],
    state: cmdlineState.to(s.state),
    reason: s.reason,
  });
}

/** Proto → KernelCmdlineStatus. */
export function kernelCmdlineStatusFromProto(
  m: kpb.KernelCmdlineStatusSpec,
): KernelCmdlineStatusSpec {
  return {
    booted: m.booted,
    desiredAdd: [...m.desiredAdd],
    desiredRemove: [...m.desiredRemove],
    next: m.next,
    pending: [...m.pending],
    state: cmdlineState.from(m.state),
    reason: m.reason,
  };
}
