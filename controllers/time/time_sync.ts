/**
 * TimeSyncController: keeps the wall clock in step with the NTP servers of
 * `machine.time` (SNTP, one server at a time, in order) and publishes
 * TimeStatus. Input: MachineConfig. Output: TimeStatus.
 *
 * Each round asks the servers in turn until one gives a usable sample, then
 * steps the clock (|offset| above the threshold) or slews it through the
 * kernel PLL, and schedules the next round one sync interval later; a failed
 * round retries sooner, with backoff. A kiss-of-death RATE backs off from
 * that server, DENY and RSTR drop it until the config changes. When time
 * sync is disabled the clock is never touched.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  TIME_STATUS,
  TIME_STATUS_ID,
  type TimeCorrection,
  type TimeStatusSpec,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { backoffDelay } from "../../runtime/mod.ts";
import type { TimeConfig } from "../../config/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import {
  type ClockBackend,
  type ClockReading,
  STA,
  toNanoseconds,
} from "../../platform/clock/mod.ts";
import { dnsResolver, type HostResolver, type NtpTransport } from "./ntp_transport.ts";
import { querySntp, type SntpSample } from "./sntp_client.ts";
import { SntpError, SntpKissOfDeathError } from "./sntp_error.ts";
import { chooseCorrection } from "./sntp_math.ts";

/** What the controller needs. */
export interface TimeSyncDeps {
  /** The clock to read and correct (native in production, fake in tests). */
  clock: ClockBackend;
  transport: NtpTransport;
  /** @default DNS through Deno.resolveDns */
  resolve?: HostResolver;
  /** Monotonic ms for round trips. @default performance.now */
  monotonic?: () => number;
  events?: EventBus;
  /** Step instead of slewing above this |offset|. @default 128 */
  stepThresholdMs?: number;
  /** Per address. @default 2000 */
  queryTimeoutMs?: number;
  /** NTP port of every server. @default 123 */
  port?: number;
  /** First retry after a failed round; doubles up to the sync interval. @default 2000 */
  retryInitialMs?: number;
}

const NAME = "time.TimeSyncController";
const NAMESPACE = "time";
const S = 1_000_000_000n;
/** Synced stays true this many sync intervals after the last good sample. */
const STALE_INTERVALS = 4;
/** A RATE kiss backs off at least this long, doubling per repeat, at most a day. */
const RATE_BACKOFF_MIN_MS = 64_000;
const RATE_BACKOFF_MAX_MS = 86_400_000;

interface ServerState {
  /** Epoch ms before which the server is skipped (kiss code RATE). */
  backoffUntil: number;
  rateKisses: number;
  /** The kiss code that dropped it (DENY, RSTR); null while usable. */
  dropped: string | null;
}

interface LastSync {
  sample: SntpSample;
  correction: TimeCorrection;
  at: number;
}

/** Builds the controller. */
export function timeSyncController(deps: TimeSyncDeps): MachineController {
  return new TimeSyncController(deps);
}

/** See the module doc. */
export class TimeSyncController implements MachineController {
  readonly name = NAME;
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
  ] as const;
  readonly outputs = [{ type: TIME_STATUS, kind: "exclusive" }] as const;

  #fingerprint = "";
  #servers = new Map<string, ServerState>();
  #nextSyncAt = 0;
  #lastRoundAt = 0;
  #failures = 0;
  #last: LastSync | null = null;
  #syncCount = 0;
  #lastError = "";
  #wasSynced = false;

  constructor(private readonly deps: TimeSyncDeps) {}

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const config = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
    if (!config) return; // no config yet: no status (a stale one is collected)
    const time = config.machine.time;
    const ptr = { type: TIME_STATUS, namespace: NAMESPACE, id: TIME_STATUS_ID } as const;
    if (time.disabled) {
      this.#fingerprint = "";
      this.#wasSynced = false;
      await ctx.apply(ptr, disabledStatus(this.#syncCount));
      return;
    }
    const fingerprint = JSON.stringify([time.servers, time.sync_interval]);
    if (fingerprint !== this.#fingerprint) {
      this.#fingerprint = fingerprint;
      this.#servers.clear();
      this.#nextSyncAt = 0;
      this.#failures = 0;
    }
    const now = ctx.clock.now();
    // Due, or the wall clock went backwards under us (then the schedule is meaningless).
    if (now >= this.#nextSyncAt || now < this.#lastRoundAt) {
      await this.#round(ctx, time);
      this.#lastRoundAt = ctx.clock.now(); // after any step, so a step back is not "backwards"
    }
    const synced = this.#synced(ctx.clock.now(), time.sync_interval);
    this.#report(synced);
    await ctx.apply(ptr, this.#status(synced));
    ctx.requeueAfter(Math.max(0, this.#nextSyncAt - ctx.clock.now()));
  }

  /** One pass over the servers; corrects the clock from the first usable sample. */
  async #round(ctx: ReconcileContext<ResourceSpecs>, time: TimeConfig): Promise<void> {
    const started = ctx.clock.now();
    const errors: string[] = [];
    for (const server of time.servers) {
      const state = this.#state(server);
      if (state.dropped !== null) {
        errors.push(`"${server}" dropped after kiss-of-death ${state.dropped}`);
        continue;
      }
      if (state.backoffUntil > started) continue;
      let sample: SntpSample;
      try {
        sample = await querySntp(server, {
          transport: this.deps.transport,
          resolve: this.deps.resolve ?? dnsResolver,
          readClock: () => toNanoseconds(this.deps.clock.read("realtime")),
          monotonic: this.deps.monotonic,
        }, {
          port: this.deps.port,
          timeoutMs: this.deps.queryTimeoutMs,
          signal: ctx.signal,
        });
      } catch (e) {
        if (!(e instanceof SntpError) || ctx.signal.aborted) throw e;
        if (e instanceof SntpKissOfDeathError) this.#kissed(server, state, e, started, time);
        ctx.log(e.message, { server, address: e.address });
        errors.push(e.message);
        continue;
      }
      try {
        const correction = await this.#correct(sample);
        state.rateKisses = 0;
        this.#syncCount++;
        this.#last = { sample, correction, at: ctx.clock.now() };
        this.#failures = 0;
        this.#lastError = errors.join("; ");
        this.#nextSyncAt = ctx.clock.now() + time.sync_interval;
        ctx.log(`clock ${correction === "step" ? "stepped" : "slewed"} from "${server}"`, {
          offsetMs: sample.offsetMs,
          delayMs: sample.delayMs,
        });
        if (correction === "step") {
          this.deps.events?.emit(
            "controller",
            NAME,
            "stepped",
            `Clock stepped by ${sample.offsetMs.toFixed(3)} ms from "${server}"`,
          );
        }
        return;
      } catch (e) {
        // The clock refused (EPERM without CAP_SYS_TIME...): another server will not help.
        errors.push(`Cannot correct the clock by ${sample.offsetMs} ms: ${(e as Error).message}`);
        break;
      }
    }
    this.#failures++;
    this.#lastError = errors.length > 0
      ? errors.join("; ")
      : time.servers.length === 0
      ? "no NTP servers configured"
      : "every server is backing off after kiss-of-death RATE";
    const retry = backoffDelay(this.#failures, {
      initialMs: this.deps.retryInitialMs ?? 2000,
      maxMs: time.sync_interval,
      factor: 2,
    });
    this.#nextSyncAt = ctx.clock.now() + retry;
  }

  /** Step or slew by the sample's offset; returns which. */
  async #correct(sample: SntpSample): Promise<TimeCorrection> {
    const { clock } = this.deps;
    const correction = chooseCorrection(sample.offsetNs, this.deps.stepThresholdMs ?? 128);
    // Half the round trip bounds the error of an SNTP sample.
    const errorUs = Math.ceil(Number(sample.delayNs) / 2000);
    if (correction === "step") {
      const target = toNanoseconds(clock.read("realtime")) + sample.offsetNs;
      await clock.setRealtime(readingOf(target));
      // Cancel any slew still in progress and mark the clock synchronised.
      clock.adjust({ status: STA.PLL, offsetNs: 0, maxErrorUs: errorUs, estErrorUs: errorUs });
    } else {
      clock.adjust({
        status: STA.PLL,
        offsetNs: Number(sample.offsetNs),
        maxErrorUs: errorUs,
        estErrorUs: errorUs,
      });
    }
    return correction;
  }

  #kissed(
    server: string,
    state: ServerState,
    e: SntpKissOfDeathError,
    now: number,
    time: TimeConfig,
  ): void {
    if (e.fatal) {
      state.dropped = e.code;
      this.deps.events?.emit(
        "controller",
        NAME,
        "server-dropped",
        `NTP server "${server}" dropped: kiss-of-death ${e.code}`,
      );
      return;
    }
    state.rateKisses++;
    const base = Math.max(time.sync_interval, RATE_BACKOFF_MIN_MS);
    state.backoffUntil = now +
      Math.min(base * 2 ** (state.rateKisses - 1), RATE_BACKOFF_MAX_MS);
  }

  #state(server: string): ServerState {
    let s = this.#servers.get(server);
    if (!s) {
      s = { backoffUntil: 0, rateKisses: 0, dropped: null };
      this.#servers.set(server, s);
    }
    return s;
  }

  #synced(now: number, intervalMs: number): boolean {
    return this.#last !== null && now - this.#last.at <= STALE_INTERVALS * intervalMs;
  }

  /** Events on the transitions that matter to an operator. */
  #report(synced: boolean): void {
    const events = this.deps.events;
    const last = this.#last;
    if (synced && !this.#wasSynced && last) {
      events?.emit(
        "controller",
        NAME,
        "synced",
        `Clock synchronised from "${last.sample.server}": ${last.correction} by ${
          last.sample.offsetMs.toFixed(3)
        } ms`,
      );
    } else if (!synced && this.#wasSynced) {
      events?.emit("controller", NAME, "unsynced", `Clock lost sync: ${this.#lastError}`);
    }
    this.#wasSynced = synced;
  }

  #status(synced: boolean): TimeStatusSpec {
    const last = this.#last;
    return {
      disabled: false,
      synced,
      server: last?.sample.server ?? "",
      address: last?.sample.address ?? "",
      offsetMs: last?.sample.offsetMs ?? null,
      delayMs: last?.sample.delayMs ?? null,
      stratum: last?.sample.stratum ?? null,
      correction: last?.correction ?? null,
      lastSync: last?.at ?? null,
      syncCount: this.#syncCount,
      nextSync: this.#nextSyncAt,
      lastError: this.#lastError,
    };
  }
}

/** The status while `machine.time.disabled` is set. */
export function disabledStatus(syncCount: number): TimeStatusSpec {
  return {
    disabled: true,
    synced: false,
    server: "",
    address: "",
    offsetMs: null,
    delayMs: null,
    stratum: null,
    correction: null,
    lastSync: null,
    syncCount,
    nextSync: null,
    lastError: "",
  };
}

/** Unix nanoseconds → a clock reading. */
export function readingOf(ns: bigint): ClockReading {
  const sec = ns / S;
  const nsec = ns % S;
  return nsec < 0n ? { sec: Number(sec - 1n), nsec: Number(nsec + S) } : {
    sec: Number(sec),
    nsec: Number(nsec),
  };
}
