/**
 * What the benches read of their processes, in one place so every suite
 * measures memory, CPU time and latency percentiles the same way: /proc
 * readings, a child's stdout as lines, the dev node's apid child, percentiles.
 */

/** VmRSS of a process in KiB, NaN when /proc does not say. */
export function rssKiB(pid: number | "self"): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) : NaN;
}

/** A process's memory: resident, proportional (shared pages split) and anonymous, in KiB. */
export interface ProcMem {
  rssKiB: number;
  pssKiB: number;
  /** Anonymous memory: the heaps, independent of who else maps the deno binary. */
  anonKiB: number;
}

/** Reads {@link ProcMem} from /proc/PID/status and /proc/PID/smaps_rollup. */
export async function procMem(pid: number): Promise<ProcMem> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const rollup = await Deno.readTextFile(`/proc/${pid}/smaps_rollup`);
  return {
    rssKiB: Number(/^VmRSS:\s+(\d+)/m.exec(status)![1]),
    pssKiB: Number(/^Pss:\s+(\d+)/m.exec(rollup)![1]),
    anonKiB: Number(/^Anonymous:\s+(\d+)/m.exec(rollup)![1]),
  };
}

/** CPU time (user + system) of a process so far, in ms, from /proc (clock ticks of 10 ms). */
export function cpuMs(pid: number | "self"): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime
}

/** The dev node's apid child: machined-edge. */
export async function devApidPid(devPid: number): Promise<number> {
  for await (const task of Deno.readDir(`/proc/${devPid}/task`)) {
    const kids = await Deno.readTextFile(`/proc/${devPid}/task/${task.name}/children`);
    for (const kid of kids.trim().split(/\s+/).filter(Boolean)) {
      const cmd = await Deno.readTextFile(`/proc/${kid}/cmdline`).catch(() => "");
      if (cmd.includes("machined-edge")) return Number(kid);
    }
  }
  throw new Error(`no apid child under the dev node (pid ${devPid})`);
}

/** The `p` quantile (0..1) of ascending `sorted`; NaN when empty. */
export function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

/** KiB as MiB with one decimal, as the figures print it. */
export function mib(kib: number): number {
  return +(kib / 1024).toFixed(1);
}

/**
 * Reads a child's stdout one line at a time; each call waits for the next
 * line and throws "`who` exited" when the stream ends first.
 */
export function lineReader(stream: ReadableStream<Uint8Array>, who: string): () => Promise<string> {
  const it = stream.pipeThrough(new TextDecoderStream()).values();
  let buf = "";
  return async () => {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return line;
      }
      const r = await it.next();
      if (r.done) throw new Error(`${who} exited`);
      buf += r.value;
    }
  };
}

/**
 * What the attack bench reports of a process, all independent of MemAvailable
 * (so of what else runs on the shared machine): VmRSS and its split into
 * anonymous and file-backed pages from /proc/PID/status, and the proportional
 * set size from smaps_rollup, in KiB.
 */
export interface ProcMemDetail {
  rssKiB: number;
  rssAnonKiB: number;
  rssFileKiB: number;
  pssKiB: number;
}

/** Reads {@link ProcMemDetail}; NaNs once the process is gone. */
export async function procMemDetail(pid: number | "self"): Promise<ProcMemDetail> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    const rollup = await Deno.readTextFile(`/proc/${pid}/smaps_rollup`);
    const field = (text: string, name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? NaN);
    return {
      rssKiB: field(status, "VmRSS"),
      rssAnonKiB: field(status, "RssAnon"),
      rssFileKiB: field(status, "RssFile"),
      pssKiB: field(rollup, "Pss"),
    };
  } catch {
    return { rssKiB: NaN, rssAnonKiB: NaN, rssFileKiB: NaN, pssKiB: NaN };
  }
}

/**
 * A process's anonymous memory by where it lives, in KiB, from
 * /proc/PID/smaps: `brk` is the `[heap]` mapping (glibc's main malloc arena:
 * C, C++ and Rust allocations), `smallMaps` the anonymous mappings of at most
 * 256 KiB with no name (in a Deno process V8's heap pages, 256 KiB each),
 * `otherMaps` every other anonymous page (V8's large objects and code
 * range, other allocators' segments, thread stacks). A heuristic by shape,
 * good enough to tell the V8 heap from malloc's.
 */
export interface AnonSplit {
  brkKiB: number;
  smallMapsKiB: number;
  otherMapsKiB: number;
}

/** {@link AnonSplit} of an smaps text. Pure. */
export function anonSplitOf(smaps: string): AnonSplit {
  const out: AnonSplit = { brkKiB: 0, smallMapsKiB: 0, otherMapsKiB: 0 };
  let kind: keyof AnonSplit = "otherMapsKiB";
  for (const line of smaps.split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const kib = (parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024;
      const name = head[3];
      kind = name === "[heap]"
        ? "brkKiB"
        : name === "" && kib <= 256
        ? "smallMapsKiB"
        : "otherMapsKiB";
      continue;
    }
    const anon = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (anon) out[kind] += Number(anon[1]);
  }
  return out;
}

/** {@link AnonSplit} of a running process; NaNs once it is gone. */
export async function anonSplit(pid: number): Promise<AnonSplit> {
  try {
    return anonSplitOf(await Deno.readTextFile(`/proc/${pid}/smaps`));
  } catch {
    return { brkKiB: NaN, smallMapsKiB: NaN, otherMapsKiB: NaN };
  }
}
