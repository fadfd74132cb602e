/**
 * The NodeActions the API calls (Version, Reboot, Shutdown): version facts, and
 * power requests handed to whoever runs the machine (the PID 1 shutdown
 * sequence, or dev mode's exit). Requests take effect just after the reply.
 */
import type {
  ActionRequester,
  NodeActions,
  RebootMode,
  ResetAnswer,
  ResetRequestData,
} from "../api/server/mod.ts";
import type { Logger } from "../logs/mod.ts";
import { imageFacts, MACHINED_VERSION, sourceRevision } from "../layout/mod.ts";

/** What the API asked for. */
export type PowerRequest = "reboot" | "poweroff";

/**
 * Builds the actions; `onPower` runs shortly after the RPC has answered.
 * `hostname` is the fallback for Version (the API reports HostnameStatus, the
 * kernel's live name, when the store has it). The source revision is looked
 * up once, from now (see {@link sourceRevision}), unless `commit` gives it.
 */
export function nodeActions(deps: {
  hostname: () => string;
  logger: Logger;
  /** `mode` is the Reboot RPC's (always `default` for a shutdown). */
  onPower: (request: PowerRequest, by: ActionRequester, mode: RebootMode) => void;
  /** @default sourceRevision() */
  commit?: () => Promise<string>;
  /** The kernel's boot id for Version; empty when absent. */
  bootId?: () => Promise<string>;
  /** The Reset RPC; absent means Unimplemented. */
  reset?: (request: ResetRequestData, by: ActionRequester) => Promise<ResetAnswer>;
  /** The Upgrade and Rollback RPCs (upgrade); absent means Unimplemented. */
  upgrade?: NodeActions["upgrade"];
  rollback?: NodeActions["rollback"];
  /** The UnlockVolume RPC (block domain); absent means Unimplemented. */
  unlockVolume?: NodeActions["unlockVolume"];
  /** @default imageFacts() */
  image?: () => Promise<{ imageVersion: string; slot: string }>;
}): NodeActions {
  const commit = (deps.commit ?? sourceRevision)().catch(() => "unknown");
  const image = (deps.image ?? imageFacts)().catch(() => ({ imageVersion: "", slot: "" }));
  const request = (what: PowerRequest) => (by: ActionRequester, mode: RebootMode = "default") => {
    deps.logger.info("power", `${what} requested over the API`, { ...by, mode });
    setTimeout(() => deps.onPower(what, by, mode), 100);
    return Promise.resolve();
  };
  return {
    version: async () => ({
      version: MACHINED_VERSION,
      commit: await commit,
      denoVersion: Deno.version.deno,
      os: Deno.build.os,
      arch: Deno.build.arch,
      hostname: deps.hostname(),
      bootId: deps.bootId ? await deps.bootId().catch(() => "") : "",
      ...await image,
    }),
    reboot: request("reboot"),
    shutdown: request("poweroff"),
    ...(deps.reset ? { reset: deps.reset } : {}),
    ...(deps.upgrade ? { upgrade: deps.upgrade } : {}),
    ...(deps.rollback ? { rollback: deps.rollback } : {}),
    ...(deps.unlockVolume ? { unlockVolume: deps.unlockVolume } : {}),
  };
}
