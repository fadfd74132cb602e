/**
 * Seeds the process's random generator off machined's one JS thread. Deno's
 * first key generation seeds AWS-LC's generator from CPU jitter measurements,
 * synchronously on the thread that asks: 20 ms on a laptop, 365 ms under TCG
 * (issue 27's profile of machined in the guest, where the reset challenger's
 * HMAC key paid it in the middle of boot). The seed belongs to the process, so
 * a worker that generates one key first, on the other CPU while boot mounts,
 * loads modules and reads its config, leaves machined's own keys (the reset
 * challenger's, the node PKI's) cheap. Nothing waits for it: if the worker
 * fails or is late, the first key on the main thread pays as before.
 *
 * @module
 */

/** What the warm-up came to; boot only logs it. */
export type CryptoWarmup = "seeded" | "failed" | "timeout";

/** How long the worker may take before it is terminated. */
export const CRYPTO_WARMUP_TIMEOUT_MS = 30_000;

const WARMUP_SOURCE = 'await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, ' +
  'false, ["sign"]); postMessage("seeded");';

function warmupWorker(): Worker {
  const url = `data:text/javascript,${encodeURIComponent(WARMUP_SOURCE)}`;
  return new Worker(url, { type: "module" });
}

/** Options of {@link warmCryptoOffThread}; tests pass their own worker. */
export interface CryptoWarmupOptions {
  /** @default CRYPTO_WARMUP_TIMEOUT_MS */
  timeoutMs?: number;
  createWorker?: () => Worker;
}

/**
 * Starts the worker and resolves when it has generated its key, failed, or
 * run out of time; the worker is terminated in every case. Never rejects.
 */
export function warmCryptoOffThread(o: CryptoWarmupOptions = {}): Promise<CryptoWarmup> {
  let worker: Worker;
  try {
    worker = (o.createWorker ?? warmupWorker)();
  } catch {
    return Promise.resolve("failed");
  }
  return new Promise((resolve) => {
    const done = (outcome: CryptoWarmup) => {
      clearTimeout(timer);
      worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => done("timeout"), o.timeoutMs ?? CRYPTO_WARMUP_TIMEOUT_MS);
    worker.onmessage = () => done("seeded");
    worker.onerror = (e) => {
      e.preventDefault(); // the worker's error is this warm-up's outcome, not PID 1's
      done("failed");
    };
  });
}
