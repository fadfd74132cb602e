/**
 * `machinectl copy PATH OUT.tar.gz`: the regular files under PATH on the
 * node (FileCopy: the same roots and redaction as `read`), packed into a
 * gzip'd ustar archive on this machine, named under PATH's parent
 * (`copy /var/log x.tar.gz` holds `log/...`). Entries the node left out are
 * listed on stderr, escaped. Files and directories keep the node's modes
 * and mtimes, except setuid and setgid, which an archive never carries
 * (support/tar.ts); the node's names cannot hold `..` (they are directory
 * entries).
 */
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { escapeText } from "../terminal_text.ts";
import { type TarEntry, tarGz } from "../support/tar.ts";

export const copyCommand = defineCommand({
  name: "copy",
  aliases: ["cp"],
  args: "PATH OUT.tar.gz",
  summary: "Copy the files under PATH on the node into a local .tar.gz",
  connects: true,
  flags: {},
  async run({ flags, args, io }) {
    if (args.length !== 2) throw new CliError("copy: needs PATH (on the node) and OUT.tar.gz", 2);
    const [path, out] = args;
    using conn = await connectToNode(flags);
    // Directories and files in the node's order, so a directory precedes what is under it.
    const entries = new Map<string, Entry>();
    let truncated = false;
    let redacted = 0;
    for await (const m of conn.client.fileCopy({ path }, { timeoutMs: 120_000 })) {
      if (m.skipped) io.err(`copy: left out ${escapeText(m.name)}: ${escapeText(m.skipped)}`);
      else if (m.truncated) truncated = true;
      else {
        const e = entries.get(m.name) ??
          { chunks: [], mtimeMs: Number(m.mtimeMs), mode: m.mode, directory: m.directory };
        if (m.offset === 0n && m.redacted) redacted++;
        if (!m.directory) e.chunks.push(m.data);
        entries.set(m.name, e);
      }
    }
    const archive: TarEntry[] = [...entries].map(([name, e]) => ({
      name,
      data: concat(e.chunks),
      mtimeMs: e.mtimeMs,
      mode: e.mode,
      directory: e.directory,
    }));
    await Deno.writeFile(out, await tarGz(archive), { mode: 0o600 });
    io.out(`wrote ${escapeText(out)}: ${archive.filter((e) => !e.directory).length} files`);
    if (redacted > 0) io.err(`copy: ${redacted} files had secrets redacted by the node`);
    if (truncated) io.err("copy: stopped at the node's copy budget (the archive is partial)");
    return truncated ? 1 : 0;
  },
});

/** One entry as it arrives: a directory, or a file's chunks. */
interface Entry {
  chunks: Uint8Array[];
  mtimeMs: number;
  mode: number;
  directory: boolean;
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
