/** `machinectl dmesg [-f] [--tail N]`: the node's kernel log, as dmesg prints it. */
import { kernelLogFromProto } from "../../api/mapping/mod.ts";
import { formatKmsgRecord } from "../../platform/kmsg/mod.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { parseTail, untilInterrupted } from "./follow.ts";
import { escapeText } from "../terminal_text.ts";

/** Printed where the kernel overwrote records before they were read. */
export const KMSG_GAP_NOTICE = "(kernel log records were lost: overwritten before they were read)";

export const dmesgCommand = defineCommand({
  name: "dmesg",
  summary: "Print the node's kernel log; -f follows",
  connects: true,
  flags: {
    follow: { kind: "boolean", short: "f", help: "keep printing new records until Ctrl-C" },
    tail: { kind: "string", value: "N", help: "only the last N records" },
  },
  async run({ flags, args, io, signal: outer }) {
    if (args.length > 0) throw new CliError(`dmesg: unexpected "${args[0]}"`, 2);
    const tail = parseTail(flags.tail);
    const follow = !!flags.follow;
    using conn = await connectToNode(flags);
    await untilInterrupted(async (signal) => {
      const stream = conn.client.dmesg(
        { tail, follow },
        follow ? { signal } : { signal, timeoutMs: 60_000 },
      );
      for await (const m of stream) {
        const r = kernelLogFromProto(m);
        if (!r) continue;
        if ("lost" in r) io.err(KMSG_GAP_NOTICE);
        else io.out(escapeText(formatKmsgRecord(r)));
      }
    }, outer);
    return 0;
  },
});
