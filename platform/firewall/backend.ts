/**
 * The firewall backend: runs one nftables transaction and reads one table back. The real one
 * is Debian's `nft` (docs/decisions.md, "The firewall through nft"); the fake simulates tables
 * in memory. Both pass backend_conformance.ts.
 * @module
 */

/** An nftables table: `inet machined`. */
export interface TableRef {
  readonly family: "inet" | "ip" | "ip6";
  readonly name: string;
}

/**
 * nftables refused or could not run a transaction or a read. `stderr` is nft's message
 * (`Error: syntax error, unexpected ...`); `exit` its status, null when it was killed.
 */
export class FirewallBackendError extends Error {
  override name = "FirewallBackendError";
  constructor(
    readonly what: string,
    readonly exit: number | null,
    readonly stderr: string,
    options?: ErrorOptions,
  ) {
    super(
      `Cannot ${what}: ${exit === null ? "nft was killed" : `nft exited with ${exit}`}${
        stderr ? `: ${stderr.trim().split("\n").slice(0, 4).join(" | ")}` : ""
      }`,
      options,
    );
  }
}

/**
 * Applying and reading back nftables tables.
 *
 * Idempotence: `apply` of a transaction that deletes and recreates a table (the compiler's
 * `add table; delete table; table … {}`) may run any number of times; `remove` of an absent
 * table is a no-op. A transaction is all or nothing: a refused one leaves every table as it was.
 */
export interface FirewallBackend {
  /**
   * Runs `transaction` (nft's file syntax) as one atomic transaction.
   * @throws FirewallBackendError when nft refuses it (nothing changed) or cannot run.
   */
  apply(transaction: string): Promise<void>;
  /**
   * The table's canonical form: equal strings for equal contents, whatever the handles; undefined
   * when the table does not exist. Two backends' forms are not comparable with each other.
   * @throws FirewallBackendError when the table cannot be listed.
   */
  read(table: TableRef): Promise<string | undefined>;
  /** Deletes the table if it exists. @throws FirewallBackendError */
  remove(table: TableRef): Promise<void>;
}

/** `inet machined` as text. */
export function tableText(t: TableRef): string {
  return `${t.family} ${t.name}`;
}
