/**
 * `machinectl list PATH` and `machinectl read PATH`: the node's files under
 * the caller's allowed roots (docs/api.md "Files on the node"). Paths and
 * contents are data from the node: what reaches the terminal is escaped
 * (escapingIo); `read --out FILE` writes the bytes unchanged to a file.
 */
import type { DiskUsageResponse, FileListResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { alignTable } from "../output.ts";
import { escapeText } from "../terminal_text.ts";
import { formatBytes } from "./observe_format.ts";

/** Wall-clock bound of one call from the client's side (the node's own deadline is 30 s). */
const CALL_TIMEOUT_MS = 60_000;

function onePath(name: string, args: string[]): string {
  if (args.length !== 1) throw new CliError(`${name}: needs exactly one PATH (absolute)`, 2);
  return args[0];
}

export const listCommand = defineCommand({
  name: "list",
  aliases: ["ls"],
  args: "PATH",
  summary: "List files under PATH on the node (reader: /var/log, /system/state)",
  connects: true,
  flags: {
    depth: {
      kind: "number",
      short: "d",
      value: "N",
      default: 0,
      help: "descend N levels below PATH",
    },
  },
  async run({ flags, args, io }) {
    const path = onePath("list", args);
    const depth = flags.depth;
    if (!Number.isInteger(depth) || depth < 0) {
      throw new CliError(`list: --depth must be a whole number, got ${depth}`, 2);
    }
    using conn = await connectToNode(flags);
    const entries: FileListResponse[] = [];
    for await (const m of conn.client.fileList({ path, depth }, { timeoutMs: CALL_TIMEOUT_MS })) {
      entries.push(m);
    }
    io.out(formatFileList(entries));
    const last = entries.at(-1);
    if (last?.truncated) io.err(`list: stopped at ${entries.length} entries (the node's budget)`);
    return entries.some((e) => e.error !== "") ? 1 : 0;
  },
});

/** The listing as a table; every path, link and error escaped (they are the node's data). Pure. */
export function formatFileList(entries: readonly FileListResponse[]): string {
  return alignTable([
    ["MODE", "KIND", "SIZE", "MODIFIED", "PATH"],
    ...entries.map((e) => [
      e.mode.toString(8).padStart(4, "0"),
      e.kind,
      e.kind === "dir" ? "-" : formatBytes(e.size),
      e.mtimeMs === 0n ? "-" : new Date(Number(e.mtimeMs)).toISOString().slice(0, 19) + "Z",
      escapeText(e.path) + (e.link ? ` -> ${escapeText(e.link)}` : "") +
      (e.error ? ` (error: ${escapeText(e.error)})` : ""),
    ]),
  ]);
}

export const readCommand = defineCommand({
  name: "read",
  aliases: ["cat"],
  args: "PATH",
  summary: "Print a file of the node (escaped); --out writes its bytes to FILE",
  connects: true,
  flags: {
    out: {
      kind: "string",
      short: "O",
      value: "FILE",
      help: "write the bytes, unchanged, to FILE (0600)",
    },
  },
  async run({ flags, args, io }) {
    const path = onePath("read", args);
    using conn = await connectToNode(flags);
    const chunks: Uint8Array[] = [];
    let redacted = false;
    for await (const m of conn.client.fileRead({ path }, { timeoutMs: CALL_TIMEOUT_MS })) {
      chunks.push(m.data);
      redacted ||= m.redacted;
    }
    const bytes = concat(chunks);
    if (flags.out) {
      await Deno.writeFile(flags.out, bytes, { mode: 0o600 });
      io.err(`wrote ${escapeText(flags.out)}: ${bytes.length} bytes`);
    } else {
      io.out(new TextDecoder().decode(bytes).replace(/\n$/, ""));
    }
    if (redacted) io.err(`read: secrets in ${escapeText(path)} were redacted by the node`);
    return 0;
  },
});

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export const usageCommand = defineCommand({
  name: "usage",
  aliases: ["du"],
  args: "PATH",
  summary: "Disk usage under PATH on the node, a total per directory (like du)",
  connects: true,
  flags: {
    depth: {
      kind: "number",
      short: "d",
      value: "N",
      default: 0,
      help: "report directories N levels below PATH",
    },
  },
  async run({ flags, args, io }) {
    const path = onePath("usage", args);
    const depth = flags.depth;
    if (!Number.isInteger(depth) || depth < 0) {
      throw new CliError(`usage: --depth must be a whole number, got ${depth}`, 2);
    }
    using conn = await connectToNode(flags);
    const rows: DiskUsageResponse[] = [];
    for await (const m of conn.client.diskUsage({ path, depth }, { timeoutMs: CALL_TIMEOUT_MS })) {
      rows.push(m);
    }
    io.out(formatUsage(rows));
    if (rows.at(-1)?.truncated) io.err(`usage: counting stopped at the node's entry budget`);
    return rows.some((r) => r.error !== "") ? 1 : 0;
  },
});

/** du's table: SIZE, ENTRIES, PATH (escaped), errors after the path. Pure. */
export function formatUsage(rows: readonly DiskUsageResponse[]): string {
  return alignTable([
    ["SIZE", "ENTRIES", "PATH"],
    ...rows.map((r) => [
      formatBytes(r.size),
      String(r.entries),
      escapeText(r.path) + (r.truncated ? " (partial)" : "") +
      (r.error ? ` (error: ${escapeText(r.error)})` : ""),
    ]),
  ]);
}
