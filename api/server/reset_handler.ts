/**
 * The Reset RPC at the edge: maps the request to {@link ResetRequestData},
 * the node's answer to ResetResponse, and a refusal to its Connect code
 * (FailedPrecondition: a challenge that does not hold; Unavailable: the node
 * cannot say yet what it owns). Consent itself is checked by the node
 * (reset/), never here or in the client.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { InvalidArgumentError, UnimplementedError } from "../errors/mod.ts";
import {
  type MachineService,
  ResetMode as ProtoResetMode,
  ResetPartitionSchema,
  type ResetRequest,
  ResetResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import { type CallerIdentity, callerKey } from "../auth/mod.ts";
import type { NodeActions, ResetMode } from "./node_actions.ts";

/** The Reset handler over `actions.reset` (Unimplemented without it). */
export function createResetHandler(
  actions: NodeActions,
): Pick<ServiceImpl<typeof MachineService>, "reset"> {
  return {
    async reset(req: ResetRequest, ctx: HandlerContext) {
      if (!actions.reset) {
        throw new UnimplementedError("Reset is not available on this machined", {
          context: { rpc: "Reset" },
        });
      }
      if (req.challenge.length > 4096) {
        throw new InvalidArgumentError("Reset challenge longer than 4096 bytes", {
          context: { rpc: "Reset", bytes: req.challenge.length },
        });
      }
      const caller: CallerIdentity | undefined = ctx.values.get(callerKey);
      // A ResetRefusedError maps to its code in errors.ts.
      const a = await actions.reset(
        { challenge: req.challenge, mode: modeFromProto(req.mode), powerOff: req.powerOff },
        { name: caller?.name ?? "", role: caller?.role ?? "" },
      );
      return create(ResetResponseSchema, {
        partitions: a.partitions.map((p) =>
          create(ResetPartitionSchema, { ...p, sizeBytes: BigInt(p.sizeBytes) })
        ),
        challenge: a.challenge,
        expires: a.expires ? timestampFromMs(a.expires) : undefined,
        bootId: a.bootId,
        accepted: a.accepted,
        progress: a.progress,
        mode: a.mode ? modeToProto(a.mode) : ProtoResetMode.UNSPECIFIED,
      });
    },
  };
}

/** UNSPECIFIED means graceful. */
export function modeFromProto(mode: ProtoResetMode): ResetMode {
  return mode === ProtoResetMode.FORCED ? "forced" : "graceful";
}

function modeToProto(mode: ResetMode): ProtoResetMode {
  return mode === "forced" ? ProtoResetMode.FORCED : ProtoResetMode.GRACEFUL;
}
