/**
 * NftFirewallBackend: Debian's `nft`, started through the process backend (machined never uses
 * Deno.Command for children). The process backend has no stdin, so a transaction is written to
 * a private file (mode 0600, in a 0700 directory) and run with `nft -f FILE`, which is the same
 * single transaction as `nft -f -`. Every run is bounded: killed after `timeoutMs`, its output
 * read up to {@link MAX_LISTING_BYTES}.
 * @module
 */
import { isSysError } from "../../native-ops/mod.ts";
import { collectRun, type ProcessBackend, TOOL_PATH } from "../process/mod.ts";
import { type FirewallBackend, FirewallBackendError, type TableRef, tableText } from "./backend.ts";
import { canonicalListing, MAX_LISTING_BYTES } from "./canonical.ts";

/** Where helper programs are looked up; machined passes no environment of its own. */
/** How long one nft run may take before it is killed. @default */
export const NFT_TIMEOUT_MS = 10_000;
/** Where the transaction file is written on a node. */
export const NFT_STATE_DIR = "/run/machined/firewall";

/** Options of {@link NftFirewallBackend}. */
export interface NftOptions {
  process: ProcessBackend;
  /** The private directory for the transaction file. @default NFT_STATE_DIR */
  stateDir?: string;
  /** The nft binary. @default "nft" (on /usr/sbin) */
  nft?: string;
  /** @default NFT_TIMEOUT_MS */
  timeoutMs?: number;
}

interface NftRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The real backend. */
export class NftFirewallBackend implements FirewallBackend {
  readonly #o: Required<NftOptions>;

  constructor(options: NftOptions) {
    this.#o = {
      stateDir: NFT_STATE_DIR,
      nft: "nft",
      timeoutMs: NFT_TIMEOUT_MS,
      ...options,
    };
  }

  async apply(transaction: string): Promise<void> {
    await Deno.mkdir(this.#o.stateDir, { recursive: true, mode: 0o700 });
    const file = `${this.#o.stateDir}/ruleset.nft`;
    await Deno.writeTextFile(file, transaction, { mode: 0o600 });
    const r = await this.#run(["-f", file]);
    if (r.code !== 0) {
      throw new FirewallBackendError("apply the nftables ruleset", r.code, r.stderr);
    }
  }

  async read(table: TableRef): Promise<string | undefined> {
    const r = await this.#run(["-j", "list", "table", table.family, table.name]);
    if (r.code !== 0 && isAbsent(r.stderr)) return undefined;
    const what = `list table ${tableText(table)}`;
    if (r.code !== 0) throw new FirewallBackendError(what, r.code, r.stderr);
    try {
      return canonicalListing(r.stdout);
    } catch (e) {
      throw new FirewallBackendError(what, r.code, `unreadable JSON: ${e}`, { cause: e });
    }
  }

  /** Without nft on the node there is no table machined could have made: nothing to remove. */
  async remove(table: TableRef): Promise<void> {
    // One transaction: create if absent, then delete, so an absent table is no error.
    const t = tableText(table);
    try {
      await this.apply(`add table ${t}\ndelete table ${t}\n`);
    } catch (e) {
      if (!isSysError(e, "ENOENT") || !/exec/.test(e.op)) throw e;
    }
  }

  async #run(args: string[]): Promise<NftRun> {
    const h = await this.#o.process.spawn({
      argv: [this.#o.nft, ...args],
      env: { PATH: TOOL_PATH },
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let killed = false;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        killed = true;
        this.#o.process.signal({ pid: h.pid }, "SIGKILL").catch(() => {}).then(resolve);
      }, this.#o.timeoutMs);
    });
    try {
      const { stdout, stderr, exit } = await collectRun(h, MAX_LISTING_BYTES);
      return { code: killed ? null : exit.code, stdout, stderr };
    } finally {
      clearTimeout(timer);
      void deadline;
    }
  }
}

/** nft's message for a table that does not exist. */
function isAbsent(stderr: string): boolean {
  return /No such file or directory/.test(stderr);
}
