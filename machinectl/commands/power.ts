/**
 * `machinectl reboot` and `machinectl shutdown` (operator role). With
 * `--wait`, they wait until the node is back with a new boot id (reboot) or
 * has stopped answering (shutdown), and report it; a node that does not within
 * `--timeout` is an error listing the last events seen.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { type ConnectionFlags, connectToNode } from "../connection.ts";
import { defineCommand } from "../command.ts";
import type { Io } from "../io.ts";
import { esc } from "../terminal_text.ts";
import { parseTimeout, WAIT_FLAGS, waitForNode, watchEvents } from "./wait_node.ts";
import { parseRebootMode, rebootModeFlag } from "./reboot_mode.ts";

export const rebootCommand = defineCommand({
  name: "reboot",
  summary: "Reboot the node (stops services, syncs, unmounts, reboots)",
  connects: true,
  flags: {
    ...WAIT_FLAGS,
    mode: rebootModeFlag("a cold reboot"),
    rolling: {
      kind: "boolean",
      help: "with -n: one node at a time, each back running before the next",
    },
  },
  run: ({ flags, io }) => power("reboot", flags, io),
});

export const shutdownCommand = defineCommand({
  name: "shutdown",
  summary: "Power the node off (stops services, syncs, unmounts, powers off)",
  connects: true,
  flags: WAIT_FLAGS,
  run: ({ flags, io }) => power("shutdown", flags, io),
});

/** What reboot and shutdown share of their flags (reboot adds `--mode`). */
type PowerFlags = ConnectionFlags & {
  readonly wait: boolean;
  readonly timeout: string;
  readonly mode?: string;
};

async function power(what: "reboot" | "shutdown", flags: PowerFlags, io: Io) {
  const timeoutMs = parseTimeout(flags.timeout);
  const mode = what === "reboot" ? parseRebootMode("reboot", flags.mode) : undefined;
  using conn = await connectToNode(flags);
  const oldBootId = flags.wait ? (await conn.client.version({}, { timeoutMs: 15_000 })).bootId : "";
  const events = flags.wait ? watchEvents(conn) : undefined;
  const started = performance.now();
  try {
    try {
      if (what === "reboot") await conn.client.reboot({ mode }, { timeoutMs: 15_000 });
      else await conn.client.shutdown({}, { timeoutMs: 15_000 });
      io.out(`${what} requested (${conn.endpoint})`);
    } catch (e) {
      if (!closedAsItWentDown(e)) throw e;
      io.out(`${what} requested (${conn.endpoint}); the connection closed as the node went down`);
    }
    if (!flags.wait) return 0;
    const r = await waitForNode(flags, {
      oldBootId,
      until: what === "reboot" ? "back" : "gone",
      timeoutMs,
      events,
      started,
    });
    io.out(
      r.outcome === "back"
        ? esc`node back at ${conn.endpoint} after ${r.seconds.toFixed(1)} s (boot ${r.bootId})`
        : `node down after ${r.seconds.toFixed(1)} s (${conn.endpoint} no longer answers)`,
    );
    return 0;
  } finally {
    await events?.stop();
  }
}

/**
 * The node accepts a power action, answers, then stops apid: under load the
 * answer can be lost with the connection ("stream closed ... before the
 * response"). The request was sent and the node is going down, which is what
 * was asked; `--rolling` then checks it really went down and came back.
 */
function closedAsItWentDown(e: unknown): boolean {
  return e instanceof ConnectError &&
    (e.code === Code.Internal || e.code === Code.Unavailable) &&
    /stream closed with error code NO_ERROR|before the response was received/i.test(e.message);
}
