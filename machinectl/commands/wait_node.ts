/**
 * Waiting for a node through a reboot, shutdown or reset: the events stream
 * is kept open while the node goes down (so the last events seen can be
 * reported when it does not come back), then Version is polled with a fresh
 * connection each time until the boot id differs (back) or the API stays
 * unreachable (gone). Bounded by a timeout; durations on the monotonic clock.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type ConnectionFlags, connectToNode, type NodeConnection } from "../connection.ts";
import { CliError } from "../io.ts";
import { esc } from "../terminal_text.ts";
import { declareFlags } from "../flags.ts";

/** The `--wait`/`--timeout` flags. */
export const WAIT_FLAGS = declareFlags({
  wait: { kind: "boolean", help: "wait until the node is back (or gone)" },
  timeout: {
    kind: "string",
    default: "10m",
    value: "DURATION",
    help: "how long --wait waits, e.g. 90s, 10m",
  },
});

/** `90s`, `10m`, `1h`, or plain seconds → ms. @throws CliError when malformed. */
export function parseTimeout(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new CliError(`--timeout must be a duration such as 90s or 10m, got "${text}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? "s"]!;
  return Number(m[1]) * unit;
}

/** Collects the last events the node sent, until stopped. */
export function watchEvents(conn: NodeConnection, keep = 15) {
  const seen: string[] = [];
  const ac = new AbortController();
  const done = (async () => {
    try {
      for await (const r of conn.client.events({ tail: 0 }, { signal: ac.signal })) {
        const e = r.event;
        if (!e) continue;
        const time = e.time ? timestampDate(e.time).toISOString() : "";
        seen.push(esc`${time} ${e.kind} ${e.subject} ${e.action} ${e.message}`.trim());
        if (seen.length > keep) seen.shift();
      }
    } catch {
      // The node went down: expected.
    }
  })();
  return {
    seen,
    async stop() {
      ac.abort();
      await done;
    },
  };
}

/** The boot id the node reports, or undefined while it is unreachable. */
export async function probeBootId(flags: ConnectionFlags): Promise<string | undefined> {
  try {
    using conn = await connectToNode(flags);
    const v = await conn.client.version({}, { timeoutMs: 5_000 });
    return v.bootId || undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the wait found. */
export interface WaitResult {
  /** `back` with a new boot id, or `gone` (shutdown). */
  outcome: "back" | "gone";
  bootId?: string;
  seconds: number;
}

/**
 * Waits until the node answers with a boot id other than `oldBootId`
 * (`until: "back"`), or stops answering for 10 s in a row (`until: "gone"`).
 * @throws CliError after `timeoutMs`, listing the last events seen.
 */
export async function waitForNode(
  flags: ConnectionFlags,
  opts: {
    oldBootId: string;
    until: "back" | "gone";
    timeoutMs: number;
    events?: { seen: string[] };
    started?: number;
    probe?: (flags: ConnectionFlags) => Promise<string | undefined>;
    pollMs?: number;
    /** How long the API must stay silent to count as gone. @default 10_000 */
    goneAfterMs?: number;
  },
): Promise<WaitResult> {
  const started = opts.started ?? performance.now();
  const probe = opts.probe ?? probeBootId;
  const pollMs = opts.pollMs ?? 1000;
  let unreachableSince: number | undefined;
  while (performance.now() - started < opts.timeoutMs) {
    const id = await probe(flags);
    const now = performance.now();
    if (opts.until === "back" && id !== undefined && id !== opts.oldBootId) {
      return { outcome: "back", bootId: id, seconds: (now - started) / 1000 };
    }
    if (opts.until === "gone") {
      if (id === undefined) {
        unreachableSince ??= now;
        if (now - unreachableSince >= (opts.goneAfterMs ?? 10_000)) {
          return { outcome: "gone", seconds: (unreachableSince - started) / 1000 };
        }
      } else unreachableSince = undefined;
    }
    await sleep(pollMs);
  }
  const last = opts.events?.seen ?? [];
  throw new CliError(
    `the node did not ${opts.until === "back" ? "come back" : "go down"} within ` +
      `${Math.round(opts.timeoutMs / 1000)} s` +
      (last.length ? `; last events seen:\n  ${last.join("\n  ")}` : "; no events seen"),
  );
}
