/**
 * The NodeActions the API calls (Version, Reboot, Shutdown): version facts, and
 * power requests handed to whoever runs the machine (the PID 1 shutdown
 * sequence, or dev mode's exit). Requests take effect just after the reply.
 */
import type { ActionRequester, NodeActions } from "../api/server/mod.ts";
import type { Logger } from "../logs/mod.ts";
import { MACHINED_VERSION } from "./version.ts";

/** What the API asked for. */
export type PowerRequest = "reboot" | "poweroff";

/** Builds the actions; `onPower` runs shortly after the RPC has answered. */
export function nodeActions(deps: {
  hostname: () => string;
  logger: Logger;
  onPower: (request: PowerRequest, by: ActionRequester) => void;
}): NodeActions {
  const request = (what: PowerRequest) => (by: ActionRequester) => {
    deps.logger.info("power", `${what} requested over the API`, { ...by });
    setTimeout(() => deps.onPower(what, by), 100);
    return Promise.resolve();
  };
  return {
    version: () => ({
      version: MACHINED_VERSION,
      commit: "",
      denoVersion: Deno.version.deno,
      os: Deno.build.os,
      arch: Deno.build.arch,
      hostname: deps.hostname(),
    }),
    reboot: request("reboot"),
    shutdown: request("poweroff"),
  };
}
