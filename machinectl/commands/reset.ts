/**
 * `machinectl reset` (admin role): asks the node what it would wipe (STATE
 * and EPHEMERAL as its provisioner recorded them) and for a challenge, shows
 * the list, asks (or takes `--yes`), and echoes the challenge to wipe. Consent
 * is checked by the node, not here: this only relays it. Then, by default,
 * waits until the node is back (boot id changed) and checks that it came up
 * re-provisioned (new partition GUIDs); `--wait=false` returns at once.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ResetMode, type ResetResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { VolumePhase } from "../../api/gen/machined/v1/block_pb.ts";
import { type ConnectionFlags, connectToNode, type NodeConnection } from "../connection.ts";
import { defineCommand } from "../command.ts";
import { CliError, type Io } from "../io.ts";
import { esc, escapeText } from "../terminal_text.ts";
import { parseTimeout, waitForNode, watchEvents } from "./wait_node.ts";

export const resetCommand = defineCommand({
  name: "reset",
  summary: "Wipe STATE and EPHEMERAL (what the node recorded), then reboot or power off",
  connects: true,
  flags: {
    yes: { kind: "boolean", short: "y", help: "do not ask (for scripts)" },
    graceful: {
      kind: "boolean",
      default: true,
      help: "stop services with their grace periods first (false: kill them)",
    },
    shutdown: { kind: "boolean", help: "power off instead of rebooting" },
    wait: { kind: "boolean", default: true, help: "wait until the node is back" },
    timeout: { kind: "string", default: "10m", value: "DURATION", help: "how long to wait" },
  },
  async run({ flags, io }) {
    const timeoutMs = parseTimeout(flags.timeout);
    using conn = await connectToNode(flags);
    const preview = await askUntilAvailable(conn, io, timeoutMs);
    showPreview(preview, conn.endpoint, io);
    if (!flags.yes && !(await confirm(io))) {
      io.err("reset cancelled: nothing was changed");
      return 1;
    }
    const events = flags.wait ? watchEvents(conn) : undefined;
    const started = performance.now();
    try {
      const mode = flags.graceful === false ? ResetMode.FORCED : ResetMode.GRACEFUL;
      const r = await conn.client.reset(
        { challenge: preview.challenge, mode, powerOff: flags.shutdown === true },
        { timeoutMs: 15_000 },
      );
      io.out(
        r.progress !== "accepted"
          ? esc`a reset is already under way (step ${r.progress})`
          : `reset accepted (${mode === ResetMode.FORCED ? "forced" : "graceful"})`,
      );
      if (!flags.wait) return 0;
      const back = await waitForNode(flags, {
        oldBootId: preview.bootId,
        until: flags.shutdown ? "gone" : "back",
        timeoutMs,
        events,
        started,
      });
      if (back.outcome === "gone") {
        io.out(`node powered off after ${back.seconds.toFixed(1)} s`);
        return 0;
      }
      io.out(
        esc`node back at ${conn.endpoint} after ${back.seconds.toFixed(1)} s (boot ${back.bootId})`,
      );
      await checkReprovisioned(flags, preview, io, timeoutMs - (performance.now() - started));
      return 0;
    } finally {
      await events?.stop();
    }
  },
});

/** The first phase; retried while the node cannot name what it owns yet (during boot). */
async function askUntilAvailable(conn: NodeConnection, io: Io, timeoutMs: number) {
  const started = performance.now();
  for (let said = false;; said = true) {
    try {
      return await conn.client.reset({}, { timeoutMs: 15_000 });
    } catch (e) {
      const unavailable = e instanceof ConnectError && e.code === Code.Unavailable;
      if (!unavailable || performance.now() - started > Math.min(timeoutMs, 120_000)) throw e;
      if (!said) io.err(esc`waiting: ${(e as ConnectError).rawMessage}`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

function showPreview(p: ResetResponse, endpoint: string, io: Io): void {
  io.out(esc`The reset of ${endpoint} (boot ${p.bootId}) will wipe:`);
  io.out(`  ${"LABEL".padEnd(10)} ${"DISK".padEnd(12)} ${"GUID".padEnd(36)} SIZE`);
  for (const part of p.partitions) {
    io.out(
      `  ${cell(part.label, 10)} ${cell(part.disk, 12)} ${cell(part.guid, 36)} ` +
        `${(Number(part.sizeBytes) / 1024 / 1024).toFixed(0)} MiB`,
    );
  }
  const exp = p.expires ? timestampDate(p.expires).toISOString() : "";
  io.out(`and nothing else (the ESP, boot slots and other disks are kept). Valid until ${exp}.`);
}

/** A node field as a fixed-width cell, escaped. */
function cell(s: string, width: number): string {
  return escapeText(s).padEnd(width);
}

async function confirm(io: Io): Promise<boolean> {
  const answer = io.ask ? await io.ask("Type 'yes' to wipe them: ") : null;
  if (answer === null) {
    throw new CliError(
      "reset needs --yes when there is no terminal to ask on: nothing was changed",
    );
  }
  return answer.trim().toLowerCase() === "yes";
}

/** The node came back with new STATE and EPHEMERAL (their GUIDs changed). */
async function checkReprovisioned(
  flags: ConnectionFlags,
  p: ResetResponse,
  io: Io,
  ms: number,
) {
  const old = new Set(p.partitions.map((x) => x.guid));
  const deadline = performance.now() + Math.max(ms, 30_000);
  let last = "";
  while (performance.now() < deadline) {
    try {
      using conn = await connectToNode(flags);
      const list = await conn.client.list({ type: "VolumeStatus" }, { timeoutMs: 10_000 });
      const vols = list.resources.map((r) =>
        r.spec.case === "volumeStatus" ? r.spec.value : undefined
      ).filter((v) => v !== undefined);
      const ready = vols.filter((v) => v.partitionUuid !== "" && v.phase === VolumePhase.READY);
      last = vols.map((v) => esc`${v.volume}:${v.partitionUuid || "-"}`).join(" ");
      if (ready.some((v) => old.has(v.partitionUuid))) {
        throw new CliError(
          `the node came back with a partition the reset should have wiped: ${last}`,
        );
      }
      if (ready.length >= 2) {
        io.out(
          `re-provisioned: ${ready.map((v) => esc`${v.volume} ${v.partitionUuid}`).join(", ")}`,
        );
        return;
      }
    } catch (e) {
      if (e instanceof CliError) throw e;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
  throw new CliError(`the node came back but its volumes are not ready: ${last || "none seen"}`);
}
