/**
 * What the service RPCs and `Logs` ask of machined: a narrow view of the
 * service supervisor (supervisor/supervisor.ts satisfies both interfaces
 * structurally, so machined passes its Supervisor as is). Kept here, not
 * imported from supervisor/, so the API (and apid, which loads this module
 * graph) does not pull in the supervisor and its CRI client.
 */
import type { LogLine } from "../../logs/mod.ts";
import type { ServiceSpecSpec, ServiceStatusSpec } from "../../resources/mod.ts";

/** One service as the API lists it. */
export interface ServiceView {
  readonly id: string;
  readonly spec: ServiceSpecSpec;
  readonly status: ServiceStatusSpec;
}

/**
 * Control of supervised services. Every method taking an id throws, for an
 * id it does not know, an error named `UnknownServiceError` (the
 * supervisor's), which the API answers with NotFound.
 */
export interface ServiceControl {
  /** Every service, ordered by id. */
  list(): readonly ServiceView[];
  /** One service. */
  get(id: string): ServiceView;
  /** Starts a stopped, finished or failed service; a running one is left alone. */
  start(id: string): void | Promise<void>;
  /** Stops a service until started again; resolves once it is down. */
  stop(id: string): void | Promise<void>;
  /** Restarts a service now, resetting its backoff. */
  restart(id: string): void | Promise<void>;
}

/** One line of a log: logs/'s line, which owns its shape. */
export type LogEntry = LogLine;

/** Options of {@link LogSource.logs}. */
export interface LogSourceReadOptions {
  /** Only the last `tail` lines kept; all kept when undefined. */
  readonly tail?: number;
  /** After the kept lines, stream new ones until `signal` aborts. */
  readonly follow?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * Service logs and machined's own (under the id `machined`). Throws, for an
 * id with no log, an error named `UnknownLogError` (NotFound over the API).
 * Ending the iteration, or aborting `signal`, must release the follower.
 */
export interface LogSource {
  logs(id: string, options: LogSourceReadOptions): AsyncIterable<LogEntry>;
}

/**
 * Names of the errors that mean "no such service or log": the supervisor's
 * UnknownServiceError and UnknownLogError. Matched by name so that this
 * module need not import the supervisor (api/server/deps_conformance_test.ts
 * checks the real classes against it).
 */
export const UNKNOWN_ID_ERROR_NAMES: ReadonlySet<string> = new Set([
  "UnknownServiceError",
  "UnknownLogError",
]);

/** Whether `e` says that a service or log id is unknown. */
export function isUnknownIdError(e: unknown): boolean {
  return e instanceof Error && UNKNOWN_ID_ERROR_NAMES.has(e.name);
}
