/**
 * How often UnlockVolume may try a passphrase: each try costs argon2id's
 * memory and time in PID 1, and a passphrase is only as strong as the
 * number of guesses allowed. A sliding window per client certificate and
 * one for the node, and one try at a time. docs/api.md's budget table
 * (`deno task docs:budgets`) renders these numbers.
 * @module
 */

/** Tries per client certificate in {@link UNLOCK_WINDOW_MS}. */
export const UNLOCK_ATTEMPTS_PER_CLIENT = 5;
/** Tries on the node, all clients together, in {@link UNLOCK_WINDOW_MS}. */
export const UNLOCK_ATTEMPTS_PER_NODE = 20;
/** The sliding window of both counts. */
export const UNLOCK_WINDOW_MS = 60_000;

/** A try admitted ({@link release} when it has answered) or refused with the reason. */
export type UnlockAdmission =
  | { ok: true; release: () => void }
  | { ok: false; reason: string; retryAfterMs: number };

/** The budget; one per API server. */
export class UnlockBudget {
  readonly #now: () => number;
  readonly #perClient: number;
  readonly #perNode: number;
  readonly #windowMs: number;
  readonly #byClient = new Map<string, number[]>();
  #node: number[] = [];
  #inFlight = false;

  constructor(options: {
    now?: () => number;
    perClient?: number;
    perNode?: number;
    windowMs?: number;
  } = {}) {
    this.#now = options.now ?? Date.now;
    this.#perClient = options.perClient ?? UNLOCK_ATTEMPTS_PER_CLIENT;
    this.#perNode = options.perNode ?? UNLOCK_ATTEMPTS_PER_NODE;
    this.#windowMs = options.windowMs ?? UNLOCK_WINDOW_MS;
  }

  /** Admit one try by `client` (its certificate's CN and serial), or say why not. */
  admit(client: string): UnlockAdmission {
    const now = this.#now();
    const since = now - this.#windowMs;
    this.#node = this.#node.filter((t) => t > since);
    const mine = (this.#byClient.get(client) ?? []).filter((t) => t > since);
    this.#byClient.set(client, mine);
    if (this.#inFlight) {
      return { ok: false, reason: "another UnlockVolume try is in progress", retryAfterMs: 1000 };
    }
    if (mine.length >= this.#perClient) {
      const retryAfterMs = mine[0] + this.#windowMs - now;
      const reason = `${this.#perClient} UnlockVolume tries per client in ${this.#windowMs} ms`;
      return { ok: false, reason, retryAfterMs };
    }
    if (this.#node.length >= this.#perNode) {
      const retryAfterMs = this.#node[0] + this.#windowMs - now;
      const reason = `${this.#perNode} UnlockVolume tries per node in ${this.#windowMs} ms`;
      return { ok: false, reason, retryAfterMs };
    }
    mine.push(now);
    this.#node.push(now);
    this.#inFlight = true;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (!released) this.#inFlight = false;
        released = true;
      },
    };
  }
}
