/**
 * FakeFirewallBackend: tables in memory, a simulation of nft's transactions good enough for the
 * controller's tests. A transaction is a list of `add table`, `delete table` and `table … { … }`
 * blocks; chain lines must start with a word nft's rules start with, else the whole transaction
 * is refused like nft's syntax error, and nothing changes. Faults: `apply`, `read`, `remove`.
 * @module
 */
import { FaultInjector } from "../mod.ts";
import { type FirewallBackend, FirewallBackendError, type TableRef, tableText } from "./backend.ts";

/** First words the fake accepts inside a chain (what the compiler and tests write). */
const RULE_WORDS = new Set([
  "type",
  "iif",
  "ct",
  "icmp",
  "icmpv6",
  "udp",
  "tcp",
  "ip",
  "ip6",
  "meta",
]);

/** The in-memory backend, with inspectors and ways to tamper as "someone else". */
export class FakeFirewallBackend implements FirewallBackend {
  readonly faults = new FaultInjector();
  /** Table text → its body lines (trimmed). */
  readonly #tables = new Map<string, string[]>();
  /** How many transactions were committed. */
  applied = 0;

  apply(transaction: string): Promise<void> {
    const fault = this.#fault("apply", [transaction]);
    if (fault) return fault;
    const next = new Map(this.#tables);
    const lines = transaction.split("\n").map((l) => l.trim()).filter((l) =>
      l && !l.startsWith("#")
    );
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i];
      let m: RegExpExecArray | null;
      if ((m = /^add table (\S+ \S+)$/.exec(l))) {
        if (!next.has(m[1])) next.set(m[1], []);
      } else if ((m = /^delete table (\S+ \S+)$/.exec(l))) {
        if (!next.delete(m[1])) return refuse(`No such file or directory: table ${m[1]}`);
      } else if ((m = /^table (\S+ \S+) \{$/.exec(l))) {
        const end = closing(lines, i);
        if (end < 0) return refuse(`syntax error: unclosed table ${m[1]}`);
        const body = lines.slice(i + 1, end);
        const bad = body.find((b) =>
          !b.startsWith("chain ") && b !== "}" && !RULE_WORDS.has(b.split(" ")[0])
        );
        if (bad !== undefined) return refuse(`syntax error, unexpected "${bad}"`);
        next.set(m[1], [...(next.get(m[1]) ?? []), ...body]);
        i = end;
      } else return refuse(`syntax error, unexpected "${l}"`);
    }
    this.#tables.clear();
    for (const [k, v] of next) this.#tables.set(k, v);
    this.applied++;
    return Promise.resolve();
  }

  read(table: TableRef): Promise<string | undefined> {
    const fault = this.#fault("read", [table]);
    if (fault) return fault;
    const body = this.#tables.get(tableText(table));
    return Promise.resolve(body === undefined ? undefined : JSON.stringify(body));
  }

  remove(table: TableRef): Promise<void> {
    const fault = this.#fault("remove", [table]);
    if (fault) return fault;
    this.#tables.delete(tableText(table));
    return Promise.resolve();
  }

  /** A rejected promise when a fault is armed for `op` (a fake fails asynchronously, as nft does). */
  #fault(op: string, args: unknown[]): Promise<never> | undefined {
    try {
      this.faults.check(op, args);
    } catch (e) {
      return Promise.reject(e);
    }
    return undefined;
  }

  /** Someone else deletes the table (`nft delete table`). */
  deleteBehindBack(table: TableRef): void {
    this.#tables.delete(tableText(table));
  }

  /** Someone else adds a line to the table's first chain. */
  addBehindBack(table: TableRef, rule: string): void {
    const body = this.#tables.get(tableText(table));
    if (!body) throw new Error(`no table ${tableText(table)}`);
    const chainEnd = body.indexOf("}");
    body.splice(chainEnd < 0 ? body.length : chainEnd, 0, rule);
  }

  /** The table's lines, or undefined. */
  tableLines(table: TableRef): readonly string[] | undefined {
    return this.#tables.get(tableText(table));
  }
}

function refuse(message: string): Promise<never> {
  return Promise.reject(
    new FirewallBackendError("apply the nftables ruleset", 1, `Error: ${message}`),
  );
}

/** The index of the `}` closing the block opened at `start`, or -1. */
function closing(lines: readonly string[], start: number): number {
  let depth = 0;
  for (let i = start; i < lines.length; i++) {
    if (lines[i].endsWith("{")) depth++;
    if (lines[i] === "}") depth--;
    if (depth === 0) return i;
  }
  return -1;
}
