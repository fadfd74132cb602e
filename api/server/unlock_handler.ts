/**
 * The UnlockVolume RPC: admits the try against {@link UnlockBudget}
 * (ResourceExhausted past it), hands the passphrase to the node action and
 * answers the slot and mapping it opened. The passphrase is never part of
 * an error, a log line or the audit line (audit.ts names the volume only);
 * a refusal maps to its code in errors.ts.
 * @module
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { ResourceExhaustedError, UnimplementedError } from "../errors/mod.ts";
import {
  type MachineService,
  type UnlockVolumeRequest,
  UnlockVolumeResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import { type CallerIdentity, callerKey } from "../auth/mod.ts";
import type { NodeActions } from "./node_actions.ts";
import { UnlockBudget } from "./unlock_budget.ts";

/** The UnlockVolume handler over `actions.unlockVolume` (Unimplemented without it). */
export function createUnlockHandler(
  actions: NodeActions,
  budget: UnlockBudget = new UnlockBudget(),
): Pick<ServiceImpl<typeof MachineService>, "unlockVolume"> {
  return {
    async unlockVolume(req: UnlockVolumeRequest, ctx: HandlerContext) {
      if (!actions.unlockVolume) {
        throw new UnimplementedError("UnlockVolume is not available on this machined", {
          context: { rpc: "UnlockVolume" },
        });
      }
      const caller: CallerIdentity | undefined = ctx.values.get(callerKey);
      const client = `${caller?.name ?? ""}/${caller?.serialNumber ?? ""}`;
      const admitted = budget.admit(client);
      if (!admitted.ok) {
        throw new ResourceExhaustedError(`UnlockVolume budget: ${admitted.reason}`, {
          context: { rpc: "UnlockVolume", retryAfterMs: admitted.retryAfterMs },
        });
      }
      try {
        const a = await actions.unlockVolume(
          { volume: req.volume, passphrase: req.passphrase },
          { name: caller?.name ?? "", role: caller?.role ?? "" },
        );
        return create(UnlockVolumeResponseSchema, a);
      } finally {
        req.passphrase.fill(0);
        admitted.release();
      }
    },
  };
}
