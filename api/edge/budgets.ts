/**
 * The API edge's budgets, in one table: what a client can hold (a handshake
 * in progress, a connection, a stream, buffered bytes, time), the number, per
 * what, where machined-edge enforces it and how a newcomer over it is
 * refused. machined passes every flag of this table to machined-edge
 * ({@link budgetArgs}), docs/api.md renders it (`deno task docs:budgets`),
 * and a test compares it with `machined-edge --print-defaults`, so the three
 * cannot drift.
 */
import {
  FILE_COPY_MAX_BYTES,
  FILE_DEADLINE_MS,
  FILE_LIST_MAX_DEPTH,
  FILE_LIST_MAX_ENTRIES,
  FILE_READ_MAX_BYTES,
  MAX_IMAGE_REF_BYTES,
  PULL_TIMEOUT_MS,
  PULLS_IN_FLIGHT,
  UNLOCK_ATTEMPTS_PER_CLIENT,
  UNLOCK_ATTEMPTS_PER_NODE,
  UNLOCK_WINDOW_MS,
} from "../server/mod.ts";
import {
  MAX_UKI_BYTES,
  UPGRADE_DEADLINE_MS,
  UPGRADE_FETCH_HEADERS_MS,
  UPGRADE_IDLE_MS,
} from "../../bundle/mod.ts";

/** The edge-only limits machined may set (the rest come from `machine.api`). */
export interface EdgeLimits {
  /** TLS handshakes in progress on the node. @default 128 */
  readonly maxHandshakes?: number;
  /** TLS handshakes in progress per source (IPv4 address, IPv6 /64). @default 16 */
  readonly maxHandshakesPerSource?: number;
  /** @default 5000 */
  readonly handshakeTimeoutMs?: number;
  /** Connections past their handshake on the node. @default 512 */
  readonly maxConnections?: number;
  /** Connections past their handshake per source (IPv4 address, IPv6 /64). @default 64 */
  readonly maxConnectionsPerClient?: number;
  /** A connection with nothing in flight this long is closed. @default 300000 */
  readonly idleTimeoutMs?: number;
  /** Requests in flight per client certificate. @default 1024 */
  readonly maxStreamsPerClient?: number;
  /** Requests in flight on the node. @default 2048 */
  readonly maxStreams?: number;
  /** Request header block per request, bytes. @default 16384 */
  readonly maxHeaderBytes?: number;
}

/** One row of the table. */
export interface EdgeBudget {
  /** The key in `machined-edge --print-defaults`. */
  readonly key: string;
  /** What is bounded. */
  readonly name: string;
  readonly number: number;
  readonly unit: string;
  /** Per node, per source, per client certificate, per connection, per stream. */
  readonly per: string;
  /** The machined-edge flag and the EdgeLimits field that set it; absent: a constant, or the config's. */
  readonly flag?: string;
  readonly limit?: keyof EdgeLimits;
  /** What sets it when not the flag alone (the machine config). */
  readonly setBy?: string;
  /** Where machined-edge enforces it. */
  readonly enforced: string;
  /** What a newcomer over it gets. */
  readonly refusal: string;
}

const SOURCE = "source (IPv4 address, IPv6 /64)";
const EXHAUSTED = "trailers-only `ResourceExhausted`";

/** Every budget of the edge. */
export const EDGE_BUDGETS: readonly EdgeBudget[] = [
  {
    key: "max_handshakes",
    name: "TLS handshakes in progress",
    number: 128,
    unit: "handshakes",
    per: "node",
    flag: "--max-handshakes",
    limit: "maxHandshakes",
    enforced: "accept (handshakes.rs)",
    refusal:
      'the oldest pending handshake of the source holding the most is closed; `refused{reason="handshake_budget"}`',
  },
  {
    key: "max_handshakes_per_source",
    name: "TLS handshakes in progress",
    number: 16,
    unit: "handshakes",
    per: SOURCE,
    flag: "--max-handshakes-per-source",
    limit: "maxHandshakesPerSource",
    enforced: "accept (handshakes.rs)",
    refusal:
      'the oldest pending handshake of the same source is closed; `refused{reason="handshake_source_budget"}`',
  },
  {
    key: "handshake_timeout_ms",
    name: "Handshake (and HTTP/1.1 request head) duration",
    number: 5000,
    unit: "ms",
    per: "connection",
    flag: "--handshake-timeout-ms",
    limit: "handshakeTimeoutMs",
    enforced: "server.rs",
    refusal: 'connection closed; `tls_refused{reason="handshake_timeout"}`',
  },
  {
    key: "listen_backlog",
    name: "Connections completed by the kernel, not yet accepted (listen backlog)",
    number: 4096,
    unit: "connections",
    per: "node",
    enforced: "listen.rs (constant; at most `net.core.somaxconn`)",
    refusal: "the kernel drops the SYN; the client resends it after 1 s, then 2 s",
  },
  {
    key: "max_connections",
    name: "Connections past their handshake",
    number: 512,
    unit: "connections",
    per: "node",
    flag: "--max-connections",
    limit: "maxConnections",
    enforced: "after the handshake (admission.rs)",
    refusal:
      `every request ${EXHAUSTED} naming the budget, then GOAWAY; \`refused{reason="connection_budget"}\``,
  },
  {
    key: "max_connections_per_client",
    name: "Connections past their handshake",
    number: 64,
    unit: "connections",
    per: SOURCE,
    flag: "--max-connections-per-client",
    limit: "maxConnectionsPerClient",
    enforced: "after the handshake (admission.rs)",
    refusal:
      `every request ${EXHAUSTED} naming the budget, then GOAWAY; \`refused{reason="connection_source_budget"}\``,
  },
  {
    key: "refused_connection_ms",
    name: "Life of a connection refused by the connection budget",
    number: 1000,
    unit: "ms",
    per: "connection",
    enforced: "admission.rs (it stays in the handshake budget meanwhile)",
    refusal: "closed after its first answer or this long",
  },
  {
    key: "idle_timeout_ms",
    name: "Connection with nothing in flight",
    number: 300000,
    unit: "ms",
    per: "connection",
    flag: "--idle-timeout-ms",
    limit: "idleTimeoutMs",
    enforced: "server.rs",
    refusal: "GOAWAY, closed",
  },
  {
    key: "max_concurrent_streams",
    name: "Streams (requests in flight)",
    number: 100,
    unit: "streams",
    per: "connection",
    flag: "--max-concurrent-streams",
    setBy: "`machine.api.max_concurrent_streams`",
    enforced: "HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS (hyper)",
    refusal: "the client waits; a stream past it is reset `REFUSED_STREAM`",
  },
  {
    key: "max_streams_per_client",
    name: "Streams (requests in flight)",
    number: 1024,
    unit: "streams",
    per: "client certificate (in maintenance mode: source)",
    flag: "--max-streams-per-client",
    limit: "maxStreamsPerClient",
    enforced: "before forwarding (server.rs, admission.rs)",
    refusal:
      `${EXHAUSTED} \`stream budget: N open streams for this client certificate (limit N)\`, nothing forwarded; \`refused{reason="stream_client_budget"}\``,
  },
  {
    key: "max_streams",
    name: "Streams (requests in flight)",
    number: 2048,
    unit: "streams",
    per: "node",
    flag: "--max-streams",
    limit: "maxStreams",
    enforced: "before forwarding (server.rs, admission.rs)",
    refusal:
      `${EXHAUSTED} \`stream budget: N open streams on this node (limit N)\`, nothing forwarded; \`refused{reason="stream_budget"}\``,
  },
  {
    key: "max_header_bytes",
    name: "Request header block",
    number: 16384,
    unit: "bytes",
    per: "request",
    flag: "--max-header-bytes",
    limit: "maxHeaderBytes",
    enforced: "hyper",
    refusal: "refused by hyper (HTTP 431 or a stream reset)",
  },
  {
    key: "read_max_bytes",
    name: "Message",
    number: 4194304,
    unit: "bytes",
    per: "message",
    flag: "--read-max-bytes",
    setBy: "`machine.api.max_message_bytes`",
    enforced: "machined (the edge forwards frames)",
    refusal: "`ResourceExhausted`",
  },
  {
    key: "upstream_stream_window",
    name: "Response bytes held (HTTP/2 window to machined, plus at most one frame ≤ 8 KiB)",
    number: 8192,
    unit: "bytes",
    per: "stream",
    enforced: "proxy.rs (constant)",
    refusal: "machined waits (flow control)",
  },
  {
    key: "client_stream_window",
    name: "Request bytes held (HTTP/2 window to the client)",
    number: 65536,
    unit: "bytes",
    per: "stream",
    enforced: "admission.rs (constant)",
    refusal: "the client waits (flow control)",
  },
  {
    key: "client_connection_window",
    name: "Request bytes held (HTTP/2 window to the client)",
    number: 65536,
    unit: "bytes",
    per: "connection",
    enforced: "admission.rs (constant)",
    refusal: "the client waits (flow control)",
  },
  {
    key: "watch_client_frames",
    name: "Watch messages a fan-out client may fall behind",
    number: 4096,
    unit: "messages",
    per: "Watch stream",
    enforced: "fanout/state.rs (constant; machined's WATCH_STREAM_CAPACITY)",
    refusal: "`overflow{dropped}`, then the contents again and `bootstrapped`",
  },
  {
    key: "watch_client_bytes",
    name: "Watch bytes a fan-out client may fall behind",
    number: 4194304,
    unit: "bytes",
    per: "Watch stream",
    enforced: "fanout/state.rs (constant)",
    refusal: "`overflow{dropped}`, then the contents again and `bootstrapped`",
  },
  {
    key: "watch_log_bytes",
    name: "Watch fan-out logs, all shares together",
    number: 12582912,
    unit: "bytes",
    per: "node",
    enforced: "fanout/state.rs (constant)",
    refusal: "the share whose event crosses it overflows its slowest clients",
  },
];

/**
 * Budgets machined enforces itself on file access (FileList, FileRead;
 * api/server/files/budgets.ts holds the numbers). Rendered in the same
 * table; not flags of machined-edge, so not in `--print-defaults`.
 */
export const FILE_ACCESS_BUDGETS: readonly EdgeBudget[] = [
  {
    key: "file_read_max_bytes",
    name: "FileRead bytes",
    number: FILE_READ_MAX_BYTES,
    unit: "bytes",
    per: "FileRead call",
    enforced: "machined (api/server/files/handlers.ts)",
    refusal: "the bytes up to it are sent, then `ResourceExhausted` naming the budget",
  },
  {
    key: "file_copy_max_bytes",
    name: "FileCopy bytes, all files together",
    number: FILE_COPY_MAX_BYTES,
    unit: "bytes",
    per: "FileCopy call",
    enforced: "machined (api/server/files/copy.ts)",
    refusal: "the file that would cross it is not sent; the last message says `truncated`",
  },
  {
    key: "file_list_max_entries",
    name: "FileList entries, DiskUsage and FileCopy entries walked",
    number: FILE_LIST_MAX_ENTRIES,
    unit: "entries",
    per: "FileList call",
    enforced: "machined (api/server/files/handlers.ts)",
    refusal: "the listing or count stops; its last message says `truncated`",
  },
  {
    key: "file_list_max_depth",
    name: "FileList, DiskUsage and FileCopy depth below the path",
    number: FILE_LIST_MAX_DEPTH,
    unit: "levels",
    per: "FileList call",
    enforced: "machined (api/server/files/handlers.ts)",
    refusal: "a deeper `depth` is lowered to it",
  },
  {
    key: "file_deadline_ms",
    name: "FileList, FileRead, DiskUsage or FileCopy duration",
    number: FILE_DEADLINE_MS,
    unit: "ms",
    per: "call",
    enforced: "machined (api/server/files/handlers.ts)",
    refusal: "`DeadlineExceeded` naming the path",
  },
];

/** machined's bounds on an upgrade (bundle/deadline.ts), so a stalled sender cannot hold the ESP. */
export const UPGRADE_BUDGETS: readonly EdgeBudget[] = [
  {
    key: "upgrade_idle_ms",
    name: "Upgrade bundle stream with no byte (client stream or `--from` body)",
    number: UPGRADE_IDLE_MS,
    unit: "ms",
    per: "Upgrade call",
    enforced: "machined (bundle/deadline.ts)",
    refusal: "`DeadlineExceeded` (`stalled`); the ESP released, `*.new` removed, nothing armed",
  },
  {
    key: "upgrade_deadline_ms",
    name: "Upgrade bundle stream, from the call's start",
    number: UPGRADE_DEADLINE_MS,
    unit: "ms",
    per: "Upgrade call",
    enforced: "machined (bundle/deadline.ts)",
    refusal: "`DeadlineExceeded` (`stalled`); the ESP released, `*.new` removed, nothing armed",
  },
  {
    key: "upgrade_fetch_headers_ms",
    name: "`--from` connect and response headers",
    number: UPGRADE_FETCH_HEADERS_MS,
    unit: "ms",
    per: "Upgrade call",
    enforced: "machined (upgrade/fetch_bundle.ts)",
    refusal: "`DeadlineExceeded`; the ESP never opened",
  },
  {
    key: "upgrade_uki_bytes",
    name: "A UKI in a Secure Boot bundle (held in memory while its signature is checked)",
    number: MAX_UKI_BYTES,
    unit: "bytes",
    per: "UKI (two per bundle; only the target slot's is kept)",
    enforced: "machined (bundle/manifest.ts, at the head)",
    refusal: "`InvalidArgument` (`bad-manifest`); nothing read past the head, the ESP never opened",
  },
];

/** machined's bounds on UnlockVolume (api/server/unlock_budget.ts): passphrase guesses cost argon2id. */
export const UNLOCK_BUDGETS: readonly EdgeBudget[] = [
  {
    key: "unlock_attempts_per_client",
    name: "UnlockVolume tries",
    number: UNLOCK_ATTEMPTS_PER_CLIENT,
    unit: `per ${UNLOCK_WINDOW_MS / 1000} s`,
    per: "client certificate (CN and serial); in maintenance mode every caller shares one",
    enforced:
      "machined (api/server/unlock_budget.ts), before the passphrase reaches PID 1's header",
    refusal: "`ResourceExhausted` naming the budget and when to retry; nothing tried",
  },
  {
    key: "unlock_attempts_per_node",
    name: "UnlockVolume tries",
    number: UNLOCK_ATTEMPTS_PER_NODE,
    unit: `per ${UNLOCK_WINDOW_MS / 1000} s`,
    per: "node",
    enforced: "machined (api/server/unlock_budget.ts)",
    refusal: "`ResourceExhausted` naming the budget and when to retry; nothing tried",
  },
  {
    key: "unlock_in_flight",
    name: "UnlockVolume tries in progress",
    number: 1,
    unit: "try",
    per: "node",
    enforced: "machined (api/server/unlock_budget.ts)",
    refusal: "`ResourceExhausted` (another try is in progress)",
  },
];

/** machined's bounds on ImagePull (api/server/image_pull_handler.ts): a pull fills /var and the link. */
export const IMAGE_PULL_BUDGETS: readonly EdgeBudget[] = [
  {
    key: "image_pulls_in_flight",
    name: "ImagePull calls in progress",
    number: PULLS_IN_FLIGHT,
    unit: "pull",
    per: "node (every client together)",
    enforced: "machined (api/server/image_pull_handler.ts), before containerd is asked",
    refusal: "`ResourceExhausted` (another pull is in progress); nothing pulled",
  },
  {
    key: "image_pull_ms",
    name: "One ImagePull, download and unpack",
    number: PULL_TIMEOUT_MS,
    unit: "ms",
    per: "ImagePull call",
    enforced: "machined (api/server/image_pull_handler.ts): the CRI call's deadline",
    refusal: "`DeadlineExceeded`; containerd abandons the pull",
  },
  {
    key: "image_ref_bytes",
    name: "An image reference",
    number: MAX_IMAGE_REF_BYTES,
    unit: "bytes",
    per: "ImagePull call",
    enforced: "machined (api/server/image_pull_handler.ts)",
    refusal: "`InvalidArgument` (also for spaces and control characters); containerd never asked",
  },
];

/** The number of the budget `key`; throws on an unknown key (a typo in a test). */
export function budget(key: string): number {
  const row = EDGE_BUDGETS.find((b) => b.key === key);
  if (!row) throw new Error(`no edge budget "${key}"`);
  return row.number;
}

/**
 * Every edge-only budget flag with its number from the table, or from
 * `limits` when set there. Pure.
 */
export function budgetArgs(limits: EdgeLimits = {}): string[] {
  return EDGE_BUDGETS.filter((b) => b.flag && b.limit).map((b) =>
    `${b.flag}=${limits[b.limit!] ?? b.number}`
  );
}

/** The table as Markdown, for docs/api.md. Pure. */
export function renderBudgetTable(): string {
  const esc = (s: string) => s.replaceAll("|", "\\|");
  const rows = [
    ...EDGE_BUDGETS,
    ...FILE_ACCESS_BUDGETS,
    ...UPGRADE_BUDGETS,
    ...UNLOCK_BUDGETS,
    ...IMAGE_PULL_BUDGETS,
  ].map(
    (b) => [
      esc(b.name),
      `${b.number.toLocaleString("en-US").replaceAll(",", " ")} ${b.unit}`,
      esc(b.per),
      b.flag ? `\`${b.flag}\`${b.setBy ? ` (${b.setBy})` : ""}` : "constant",
      esc(b.enforced),
      esc(b.refusal),
    ],
  );
  const head = ["Budget", "Number", "Per", "Set by", "Enforced", "Over it"];
  return [head, head.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}
