/**
 * Keeps the API server's certificate fresh: checks on a timer (and on demand
 * when the node's names change), issues a replacement from the node CA when
 * the current one is due, persists it, and hands it to the server to swap in
 * (`setSecureContext`). The clock is injectable so tests drive time.
 *
 * @module
 */
import type { CertificateAuthority, KeyedCertificate } from "./keyed_certificate.ts";
import { serverCertificateFits, writeServerCertificate } from "./node_pki.ts";
import { type RenewalPolicy, renewalTime } from "./renewal.ts";
import { issueServerCertificate } from "./server_certificate.ts";

/** The time source and timer the renewer uses. */
export interface RenewerClock {
  /** The current time. */
  now(): Date;
  /** Returns an opaque handle for {@link clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const systemClock: RenewerClock = {
  now: () => new Date(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The node's names a server certificate must cover. */
export interface ServerNames {
  /** DNS names (hostname first). */
  hostnames: readonly string[];
  /** IPv4/IPv6 addresses. */
  addresses: readonly string[];
}

/** Parameters of {@link renewServerCertificate}. */
export interface RenewServerCertificateParams extends ServerNames {
  ca: CertificateAuthority;
  /** When set, the new pair is written there (`server.key`, `server.crt`) before returning. */
  dir?: string;
  now?: Date;
}

/** Issue a replacement server certificate (new key, new serial) and optionally persist it. */
export async function renewServerCertificate(
  params: RenewServerCertificateParams,
): Promise<KeyedCertificate> {
  const server = await issueServerCertificate(params);
  if (params.dir) await writeServerCertificate(params.dir, server);
  return server;
}

/** Options of {@link createServerCertRenewer}. */
export interface ServerCertRenewerOptions extends ServerNames {
  ca: CertificateAuthority;
  /** The certificate the server uses now. */
  current: KeyedCertificate;
  /**
   * Called with each new certificate, after it was persisted; it becomes
   * `current` only once this resolves, so a failed swap is retried.
   */
  onRenewed: (server: KeyedCertificate) => void | Promise<void>;
  /** PKI directory to persist renewals into. @default not persisted */
  dir?: string;
  policy?: RenewalPolicy;
  /** @default systemClock */
  clock?: RenewerClock;
  /**
   * Longest wait between checks, so clock jumps (NTP) are noticed. A board
   * without a real-time clock (the Raspberry Pi 3) boots in 1970, issues its
   * certificate then, and steps to the present at its first NTP sync; clients
   * refuse that certificate until it is re-issued. A check is one signature
   * verification. @default 1 minute
   */
  maxCheckIntervalMs?: number;
  /** Wait after a failed renewal before trying again. @default 1 minute */
  retryDelayMs?: number;
  /** Receives renewal failures (which are retried). @default console.error */
  onError?: (error: unknown) => void;
}

/** A running renewer. */
export interface ServerCertRenewer {
  /** The certificate currently in use. */
  readonly current: KeyedCertificate;
  /** Check now and renew if due; resolves to whether it renewed. Rejects on failure. */
  checkNow(): Promise<boolean>;
  /** The node's names changed: renew at once if a name is not covered. */
  updateNames(names: ServerNames): Promise<boolean>;
  /** Stop the timer. A renewal in flight completes but is not announced. */
  stop(): void;
}

/** Start a renewer; the first check runs immediately (asynchronously). */
export function createServerCertRenewer(options: ServerCertRenewerOptions): ServerCertRenewer {
  const clock = options.clock ?? systemClock;
  const maxInterval = options.maxCheckIntervalMs ?? 60 * 1000;
  const retryDelay = options.retryDelayMs ?? 60 * 1000;
  const onError = options.onError ??
    ((e: unknown) => console.error("server certificate renewal failed", e));
  let names: ServerNames = { hostnames: options.hostnames, addresses: options.addresses };
  let current = options.current;
  let timer: unknown;
  let stopped = false;
  let running: Promise<boolean> | undefined;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = clock.setTimeout(tick, Math.max(0, Math.min(ms, maxInterval)));
  };

  const check = (): Promise<boolean> => {
    running ??= (async () => {
      try {
        const now = clock.now();
        if (
          await serverCertificateFits(current.cert, options.ca, {
            ...names,
            renewal: options.policy,
          }, now)
        ) {
          return false;
        }
        const next = await renewServerCertificate({
          ca: options.ca,
          ...names,
          dir: options.dir,
          now,
        });
        if (stopped) return false;
        await options.onRenewed(next); // if the swap fails, the next check issues again
        current = next;
        return true;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  function tick() {
    timer = undefined;
    check().then(
      () => schedule(renewalTime(current.cert, options.policy).getTime() - clock.now().getTime()),
      (e) => {
        onError(e);
        schedule(retryDelay);
      },
    );
  }

  schedule(0);
  return {
    get current() {
      return current;
    },
    checkNow: check,
    updateNames(next) {
      names = { hostnames: [...next.hostnames], addresses: [...next.addresses] };
      return check();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
