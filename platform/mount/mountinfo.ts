/**
 * Parse /proc/self/mountinfo (proc(5)): one mount per line, with paths
 * octal-escaped by the kernel (`\040` space, `\011` tab, `\012` newline,
 * `\134` backslash) and a variable list of optional fields before `-`.
 * @module
 */

/** One line of mountinfo. */
export interface MountInfo {
  id: number;
  parentId: number;
  major: number;
  minor: number;
  /** The path inside the filesystem that is mounted (not `/` for binds of a subtree). */
  root: string;
  mountPoint: string;
  /** Per-mount options, e.g. `rw`, `nosuid`, `relatime`. */
  options: string[];
  /** Propagation tags such as `shared:1` or `master:2`. */
  optionalFields: string[];
  fstype: string;
  source: string;
  /** Per-superblock options, e.g. `size=1024k`. */
  superOptions: string[];
}

/** Undo the kernel's octal escapes (`\040` → space). */
export function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Escape a path the way the kernel writes it into mountinfo. */
export function escapeMountPath(s: string): string {
  return s.replace(/[ \t\n\\]/g, (c) => "\\" + c.charCodeAt(0).toString(8).padStart(3, "0"));
}

/**
 * Parse the whole file. Malformed lines throw.
 * @throws SyntaxError naming the line that could not be parsed
 */
export function parseMountInfo(text: string): MountInfo[] {
  return text.split("\n").filter((l) => l.trim() !== "").map(parseLine);
}

function parseLine(line: string): MountInfo {
  const fields = line.split(" ");
  const sep = fields.indexOf("-", 6);
  if (fields.length < 10 || sep < 0 || fields.length < sep + 3) {
    throw new SyntaxError(`Cannot parse mountinfo line ${JSON.stringify(line)}`);
  }
  const [major, minor] = fields[2].split(":").map(Number);
  const num = (s: string) => {
    const n = Number(s);
    if (!Number.isInteger(n)) {
      throw new SyntaxError(`Cannot parse mountinfo line ${JSON.stringify(line)}`);
    }
    return n;
  };
  return {
    id: num(fields[0]),
    parentId: num(fields[1]),
    major: num(String(major)),
    minor: num(String(minor)),
    root: unescapeMountPath(fields[3]),
    mountPoint: unescapeMountPath(fields[4]),
    options: fields[5].split(","),
    optionalFields: fields.slice(6, sep),
    fstype: unescapeMountPath(fields[sep + 1]),
    source: unescapeMountPath(fields[sep + 2]),
    superOptions: (fields[sep + 3] ?? "").split(",").filter((o) => o !== ""),
  };
}
