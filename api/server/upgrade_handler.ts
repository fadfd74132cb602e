/**
 * The Upgrade and Rollback RPCs at the edge: the client stream's chunks are
 * handed to the node as they arrive (never collected), `stage` is read from
 * the first message; a refusal (`UpgradeRefusedError`) maps to its
 * Connect code in errors.ts.
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { UnimplementedError } from "../errors/mod.ts";
import {
  type MachineService,
  RollbackResponseSchema,
  type UpgradeRequest,
  UpgradeResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import { type CallerIdentity, callerKey } from "../auth/mod.ts";
import type { ActionRequester, NodeActions } from "./node_actions.ts";
import { rebootModeFromProto } from "./reboot_mode.ts";

/** The Upgrade and Rollback handlers over `actions` (Unimplemented without them). */
export function createUpgradeHandlers(
  actions: NodeActions,
): Pick<ServiceImpl<typeof MachineService>, "upgrade" | "rollback"> {
  return {
    async upgrade(requests: AsyncIterable<UpgradeRequest>, ctx: HandlerContext) {
      if (!actions.upgrade) {
        throw new UnimplementedError("Upgrade is not available on this machined", {
          context: { rpc: "Upgrade" },
        });
      }
      const it = requests[Symbol.asyncIterator]();
      const first = await it.next();
      const stage = !first.done && first.value.stage;
      async function* chunks(): AsyncGenerator<Uint8Array> {
        if (first.done) return;
        if (first.value.chunk.length) yield first.value.chunk;
        for (let r = await it.next(); !r.done; r = await it.next()) {
          if (r.value.chunk.length) yield r.value.chunk;
        }
      }
      const fromUrl = first.done ? "" : first.value.fromUrl;
      const force = !first.done && first.value.force;
      const rebootMode = rebootModeFromProto(first.done ? 0 : first.value.rebootMode);
      const options = { stage, force, rebootMode, ...(fromUrl ? { fromUrl } : {}) };
      const a = await actions.upgrade!(chunks(), options, requester(ctx));
      return create(UpgradeResponseSchema, { ...a, bytes: BigInt(a.bytes) });
    },

    async rollback(req, ctx) {
      if (!actions.rollback) {
        throw new UnimplementedError("Rollback is not available on this machined", {
          context: { rpc: "Rollback" },
        });
      }
      const a = await actions.rollback!({ stage: req.stage }, requester(ctx));
      return create(RollbackResponseSchema, a);
    },
  };
}

function requester(ctx: HandlerContext): ActionRequester {
  const caller: CallerIdentity | undefined = ctx.values.get(callerKey);
  return { name: caller?.name ?? "", role: caller?.role ?? "" };
}
