/**
 * `machinectl upgrade -f BUNDLE` and `machinectl rollback` (admin role).
 * upgrade streams the bundle file in 1 MiB chunks (never read whole), or
 * with `--from URL` has the node fetch it, shows
 * the bytes sent and the node's progress events (verified, written, armed),
 * then by default waits until the node is back with a new boot id, on the
 * new slot and version, with MachineStatus ready; a node that came back on
 * the old slot (the trial failed and the loader fell back) is an error.
 * `--stage` writes and arms without rebooting. rollback re-arms the other
 * slot and waits the same way.
 */
import type { RebootMode } from "../../api/gen/machined/v1/machine_pb.ts";
import type { NodeConnection } from "../connection.ts";
import { type ConnectionFlags, connectToNode } from "../connection.ts";
import { defineCommand } from "../command.ts";
import { declareFlags } from "../flags.ts";
import { CliError, type Io } from "../io.ts";
import { esc, escapeText } from "../terminal_text.ts";
import { parseTimeout, waitForNode } from "./wait_node.ts";
import { parseRebootMode, rebootModeFlag } from "./reboot_mode.ts";

/** Chunk size on the wire: well under the API's 4 MiB message limit. */
export const UPGRADE_CHUNK_BYTES = 1 << 20;

const FLAGS = declareFlags({
  stage: { kind: "boolean", help: "write and arm, but do not reboot" },
  wait: {
    kind: "boolean",
    default: true,
    help: "wait until the node is back on the new slot and ready",
  },
  timeout: { kind: "string", default: "15m", value: "DURATION", help: "how long to wait" },
  rolling: {
    kind: "boolean",
    help: "with -n: one node at a time, each back on the new slot before the next",
  },
});

export const upgradeCommand = defineCommand({
  name: "upgrade",
  summary: "Install a signed upgrade bundle into the other slot and boot it",
  connects: true,
  flags: {
    file: {
      kind: "string",
      short: "f",
      value: "BUNDLE",
      help: "the bundle (deno task image --bundle); or --from",
    },
    from: { kind: "string", value: "URL", help: "an http(s) URL the node fetches the bundle from" },
    force: {
      kind: "boolean",
      help: "install even a version the downgrade floor refuses (older, the same, or unordered)",
    },
    mode: rebootModeFlag("kexec, cold when kexec fails"),
    ...FLAGS,
  },
  async run({ flags, io }) {
    if (!flags.file === !flags.from) {
      throw new CliError("upgrade: give one of -f BUNDLE or --from URL");
    }
    const timeoutMs = parseTimeout(flags.timeout);
    const stage = flags.stage === true;
    const force = flags.force === true;
    const rebootMode = parseRebootMode("upgrade", flags.mode);
    const size = flags.file
      ? (await Deno.stat(flags.file).catch((e) => {
        throw new CliError(`upgrade: cannot read ${flags.file}: ${(e as Error).message}`);
      })).size
      : 0;
    using conn = await connectToNode(flags);
    const progress = followUpgradeEvents(conn, io);
    const started = performance.now();
    try {
      const requests = flags.file
        ? bundleChunks(flags.file, { stage, force, rebootMode }, size, io)
        : (async function* () {
          yield { fromUrl: flags.from, stage, force, rebootMode };
        })();
      const r = await conn.client.upgrade(requests);
      const sent = ((performance.now() - started) / 1000).toFixed(1);
      io.out(
        esc`slot ${r.slot} armed as ${r.entry}: version ${r.version}, ${r.bytes} bytes in ${sent} s, signed by ${r.keyId}`,
      );
      if (!r.rebooting) {
        io.out("staged: the node boots it on its next reboot");
        return 0;
      }
      if (!flags.wait) return 0;
      return await waitBackOn(flags, io, {
        slot: r.slot,
        version: r.version,
        bootId: r.bootId,
        started,
        timeoutMs,
      });
    } finally {
      progress.stop();
    }
  },
});

export const rollbackCommand = defineCommand({
  name: "rollback",
  summary: "Boot the other slot (a blessed image) again",
  connects: true,
  flags: FLAGS,
  async run({ flags, io }) {
    const timeoutMs = parseTimeout(flags.timeout);
    using conn = await connectToNode(flags);
    const started = performance.now();
    const r = await conn.client.rollback({ stage: flags.stage === true }, { timeoutMs: 60_000 });
    io.out(esc`slot ${r.slot} boots next`);
    if (!r.rebooting || !flags.wait) return 0;
    return await waitBackOn(flags, io, { slot: r.slot, bootId: r.bootId, started, timeoutMs });
  },
});

/** The bundle file as UpgradeRequest messages, 1 MiB each, `stage` on the first. */
async function* bundleChunks(
  path: string,
  first: { stage: boolean; force: boolean; rebootMode: RebootMode },
  size: number,
  io: Io,
) {
  const f = await Deno.open(path);
  try {
    const buf = new Uint8Array(UPGRADE_CHUNK_BYTES);
    let sent = 0;
    let shown = 0;
    for (let isFirst = true;; isFirst = false) {
      let n = 0;
      while (n < buf.length) {
        const r = await f.read(buf.subarray(n));
        if (r === null) break;
        n += r;
      }
      if (n === 0 && !isFirst) return;
      sent += n;
      if (sent - shown >= 16 * UPGRADE_CHUNK_BYTES || sent === size) {
        shown = sent;
        io.err(`sent ${(sent / 2 ** 20).toFixed(1)} of ${(size / 2 ** 20).toFixed(1)} MiB`);
      }
      yield { chunk: buf.slice(0, n), ...(isFirst ? first : {}) };
      if (n < buf.length) return;
    }
  } finally {
    f.close();
  }
}

/** Prints the node's `upgrade` events (verified, written, armed, refused) as they come. */
function followUpgradeEvents(conn: NodeConnection, io: Io): { stop(): void } {
  const ac = new AbortController();
  (async () => {
    try {
      for await (
        const r of conn.client.events({ kinds: ["upgrade"], tail: 0 }, { signal: ac.signal })
      ) {
        if (r.event && r.event.action !== "received") io.err(escapeText(r.event.message));
      }
    } catch { /* stopped, or the node went down for the reboot */ }
  })();
  return { stop: () => ac.abort() };
}

/**
 * Waits for a new boot id, then for MachineStatus ready, and checks the slot
 * (and version) the node reports. 0 when it is the expected one.
 */
async function waitBackOn(
  flags: ConnectionFlags,
  io: Io,
  want: { slot: string; version?: string; bootId: string; started: number; timeoutMs: number },
): Promise<number> {
  const back = await waitForNode(flags, {
    oldBootId: want.bootId,
    until: "back",
    timeoutMs: want.timeoutMs,
    started: want.started,
  });
  const deadline = want.started + want.timeoutMs;
  for (;;) {
    try {
      using conn = await connectToNode(flags);
      const v = await conn.client.version({}, { timeoutMs: 5_000 });
      const ms = await conn.client.get({ type: "MachineStatus", id: "machine" }, {
        timeoutMs: 5_000,
      });
      const spec = ms.resource?.spec;
      const ready = spec?.case === "machineStatus" && spec.value.ready;
      if (ready) {
        const seconds = ((performance.now() - want.started) / 1000).toFixed(1);
        const on = esc`slot ${v.slot || "?"}, version ${v.imageVersion || "?"}`;
        if (v.slot !== want.slot || (want.version && v.imageVersion !== want.version)) {
          io.err(
            `node came back on ${on} after ${seconds} s, ` + esc`not on slot ${want.slot}` +
              (want.version ? esc` version ${want.version}` : "") +
              ": the new slot did not boot (the loader fell back); see machinectl events",
          );
          return 1;
        }
        io.out(`node back on ${on} and ready after ${seconds} s ` + esc`(boot ${back.bootId})`);
        return 0;
      }
    } catch { /* still starting */ }
    if (performance.now() > deadline) {
      throw new CliError(`the node came back but was not ready within ${want.timeoutMs / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
