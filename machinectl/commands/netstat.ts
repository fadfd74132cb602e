/**
 * `machinectl netstat`: open TCP and UDP sockets with the process holding
 * each (`-l`: listening ones only).
 */
import type { NetstatResponse, Socket } from "../../api/gen/machined/v1/machine_pb.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { alignTable } from "../output.ts";
import { formatDocument, noArgs, OUTPUT_FLAG } from "./observe_format.ts";

export const netstatCommand = defineCommand({
  name: "netstat",
  aliases: ["ss"],
  summary: "List open TCP/UDP sockets with their process",
  connects: true,
  flags: {
    ...OUTPUT_FLAG,
    listening: {
      kind: "boolean",
      short: "l",
      help: "only listening sockets (and unbound UDP)",
    },
  },
  async run({ flags, args, io }) {
    noArgs("netstat", args);
    const format = flags.output;
    using conn = await connectToNode(flags);
    const r = await conn.client.netstat({}, { timeoutMs: 15_000 });
    const sockets = flags.listening ? r.sockets.filter(isListening) : r.sockets;
    const shown = { ...r, sockets } as NetstatResponse;
    io.out(format === "table" ? formatNetstat(shown) : formatDocument(shown, format));
    return 0;
  },
});

/** A TCP listener, or a UDP socket bound with no peer. */
function isListening(s: Socket): boolean {
  return s.state === "LISTEN" || (s.protocol.startsWith("udp") && s.remotePort === 0);
}

/** `addr:port`, bracketed for IPv6. */
function endpoint(address: string, port: number): string {
  return `${address.includes(":") ? `[${address}]` : address}:${port === 0 ? "*" : port}`;
}

/** The netstat table. */
export function formatNetstat(r: NetstatResponse): string {
  return alignTable([
    ["PROTO", "LOCAL", "REMOTE", "STATE", "RECV-Q", "SEND-Q", "PID", "COMMAND", "OWNER"],
    ...r.sockets.map((s) => [
      s.protocol,
      endpoint(s.localAddress, s.localPort),
      endpoint(s.remoteAddress, s.remotePort),
      s.state,
      String(s.rxQueue),
      String(s.txQueue),
      s.pid === 0 ? "-" : String(s.pid),
      s.command || "-",
      s.owner || "-",
    ]),
  ]);
}
