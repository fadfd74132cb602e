/**
 * The dashboard's state and the one reducer that changes it. Everything the
 * screen shows comes from here, and everything here comes from an action fed
 * by a stream (Watch, Events, Logs), a 2 s sample (Stats, Memory) or the
 * connection loop, so the whole behaviour is testable with fake actions.
 */
import type { MachineStage, ServiceState, UnmetCondition } from "../../resources/mod.ts";

/** How many CPU/memory samples the history keeps (at 2 s: 8 minutes). */
export const HISTORY_SAMPLES = 240;
/** How many recent events the state keeps. */
export const EVENT_LINES = 200;
/** How many log lines the state keeps. */
export const LOG_LINES = 200;

/** One service row. */
export interface ServiceRow {
  readonly id: string;
  readonly state: ServiceState;
  readonly healthy: boolean;
  readonly restarts: number;
  readonly pid: number | null;
  readonly message: string;
}

/** One event line. */
export interface EventLine {
  readonly seq: number;
  /** Epoch ms. */
  readonly time: number;
  readonly kind: string;
  readonly subject: string;
  readonly action: string;
  readonly message: string;
}

/** One log line of machined's own log. */
export interface LogLine {
  readonly seq: number;
  /** Epoch ms. */
  readonly time: number;
  readonly text: string;
}

/** A CPU and memory reading (the Stats and Memory RPCs). */
export interface Sample {
  /** Busy share of all cores since the previous sample, 0..1; null for the first. */
  readonly cpu: number | null;
  readonly cores: number;
  /** Busy share of each core since the previous sample, 0..1, in order; empty for the first. */
  readonly perCore: readonly number[];
  readonly load1: number;
  readonly memUsedBytes: number;
  readonly memTotalBytes: number;
}

/** Whether the dashboard has a live session with the node. */
export type Link =
  | { readonly kind: "connecting"; readonly endpoint: string }
  | { readonly kind: "connected"; readonly endpoint: string; readonly since: number }
  | {
    readonly kind: "reconnecting";
    readonly endpoint: string;
    readonly attempt: number;
    readonly error: string;
    /** Epoch ms of the next attempt. */
    readonly retryAt: number;
  };

/** Everything the screen shows. */
export interface DashboardState {
  readonly link: Link;
  /** What identifies the node's current boot (MachineStatus's creation time). */
  readonly bootKey: string | null;
  /** Epoch ms the current boot began, set when a boot replaced an earlier one. */
  readonly rebootedAt: number | null;
  readonly hostname: string;
  readonly version: string;
  readonly stage: MachineStage | null;
  readonly ready: boolean;
  readonly unmet: readonly UnmetCondition[];
  readonly mode: string;
  readonly services: ReadonlyMap<string, ServiceRow>;
  readonly events: readonly EventLine[];
  readonly logs: readonly LogLine[];
  /** Oldest first, at most HISTORY_SAMPLES. */
  readonly cpu: readonly number[];
  /** Used share of memory, 0..1, oldest first. */
  readonly mem: readonly number[];
  readonly lastSample: Sample | null;
  /** Why CPU/memory cannot be shown, e.g. a node without the Stats RPC. */
  readonly sampleError: string | null;
  /** Why the node refuses a stream the screen shows (an older node, a narrower role). */
  readonly refused: Readonly<Partial<Record<OptionalStream, string>>>;
  /** Epoch ms, for the clock and "ago" texts. */
  readonly now: number;
}

/** Streams the dashboard does without when the node refuses them. */
export type OptionalStream = "events" | "logs";

/** What can happen to the state. */
export type DashboardAction =
  | { readonly type: "connecting"; readonly endpoint: string }
  | { readonly type: "connected"; readonly endpoint: string; readonly at: number }
  | {
    readonly type: "disconnected";
    readonly attempt: number;
    readonly error: string;
    readonly retryAt: number;
  }
  | { readonly type: "boot"; readonly bootKey: string; readonly startedAt: number }
  | { readonly type: "version"; readonly version: string; readonly hostname: string }
  | {
    readonly type: "machineStatus";
    readonly stage: MachineStage;
    readonly ready: boolean;
    readonly unmet: readonly UnmetCondition[];
    readonly mode: string;
  }
  | { readonly type: "hostname"; readonly hostname: string }
  | { readonly type: "servicesReset" }
  | { readonly type: "service"; readonly row: ServiceRow }
  | { readonly type: "serviceGone"; readonly id: string }
  | { readonly type: "event"; readonly event: EventLine }
  | { readonly type: "log"; readonly line: LogLine }
  | { readonly type: "sample"; readonly sample: Sample }
  | { readonly type: "sampleError"; readonly error: string }
  | { readonly type: "refused"; readonly stream: OptionalStream; readonly error: string }
  | { readonly type: "tick"; readonly now: number };

/** The state before anything is known. */
export function initialState(endpoint: string, now: number): DashboardState {
  return {
    link: { kind: "connecting", endpoint },
    bootKey: null,
    rebootedAt: null,
    hostname: "",
    version: "",
    stage: null,
    ready: false,
    unmet: [],
    mode: "",
    services: new Map(),
    events: [],
    logs: [],
    cpu: [],
    mem: [],
    lastSample: null,
    sampleError: null,
    refused: {},
    now,
  };
}

/** Applies one action; never mutates `s`. */
export function reduce(s: DashboardState, a: DashboardAction): DashboardState {
  switch (a.type) {
    case "connecting":
      return { ...s, link: { kind: "connecting", endpoint: a.endpoint } };
    case "connected":
      return { ...s, link: { kind: "connected", endpoint: a.endpoint, since: a.at } };
    case "disconnected":
      return {
        ...s,
        link: {
          kind: "reconnecting",
          endpoint: s.link.endpoint,
          attempt: a.attempt,
          error: a.error,
          retryAt: a.retryAt,
        },
      };
    case "boot":
      return onBoot(s, a.bootKey, a.startedAt);
    case "version":
      return { ...s, version: a.version, hostname: s.hostname || a.hostname };
    case "machineStatus":
      return { ...s, stage: a.stage, ready: a.ready, unmet: a.unmet, mode: a.mode };
    case "hostname":
      return { ...s, hostname: a.hostname };
    case "servicesReset":
      return { ...s, services: new Map() };
    case "service":
      return { ...s, services: new Map(s.services).set(a.row.id, a.row) };
    case "serviceGone": {
      const services = new Map(s.services);
      services.delete(a.id);
      return { ...s, services };
    }
    case "event":
      return onEvent(s, a.event);
    case "log":
      return onLog(s, a.line);
    case "sample":
      return onSample(s, a.sample);
    case "sampleError":
      return { ...s, sampleError: a.error };
    case "refused":
      return { ...s, refused: { ...s.refused, [a.stream]: a.error } };
    case "tick":
      return { ...s, now: a.now };
  }
}

/**
 * A new boot key after an earlier one means the node rebooted (or dev mode was
 * restarted): the history, events and logs of the old boot go, and the screen
 * says when the new one began. The same key again (a reconnect) keeps all.
 */
function onBoot(s: DashboardState, bootKey: string, startedAt: number): DashboardState {
  if (s.bootKey === bootKey) return s;
  if (s.bootKey === null) return { ...s, bootKey };
  return {
    ...s,
    bootKey,
    rebootedAt: startedAt,
    services: new Map(),
    events: [],
    logs: [],
    cpu: [],
    mem: [],
    lastSample: null,
    stage: null,
    ready: false,
    unmet: [],
  };
}

/** Replayed events a reconnect sends again (seq not past the last) are skipped. */
function onEvent(s: DashboardState, e: EventLine): DashboardState {
  const last = s.events.at(-1);
  if (last && e.seq !== 0 && e.seq <= last.seq) return s;
  return { ...s, events: [...s.events, e].slice(-EVENT_LINES) };
}

function onLog(s: DashboardState, l: LogLine): DashboardState {
  const last = s.logs.at(-1);
  if (last && l.seq <= last.seq) return s;
  return { ...s, logs: [...s.logs, l].slice(-LOG_LINES) };
}

function onSample(s: DashboardState, sample: Sample): DashboardState {
  const cpu = sample.cpu === null ? s.cpu : [...s.cpu, sample.cpu].slice(-HISTORY_SAMPLES);
  const share = sample.memTotalBytes > 0 ? sample.memUsedBytes / sample.memTotalBytes : 0;
  return {
    ...s,
    cpu,
    mem: [...s.mem, share].slice(-HISTORY_SAMPLES),
    lastSample: sample,
    sampleError: null,
  };
}
