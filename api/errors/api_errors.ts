/**
 * The API's typed refusals. Handlers, the auth rules and the routes throw these
 * with the values that explain them; api/server/errors.ts alone turns each kind
 * into a Connect code, so no handler names a wire code.
 */

/** What kind of refusal an {@link ApiError} is; api/server/errors.ts maps each to one code. */
export type ApiErrorKind =
  | "invalid-argument"
  | "not-found"
  | "permission-denied"
  | "unauthenticated"
  | "failed-precondition"
  | "resource-exhausted"
  | "unavailable"
  | "unimplemented"
  | "deadline-exceeded"
  | "canceled";

/** The values that explain a refusal (an RPC name, a path, a limit), kept for logs and tests. */
export type ErrorContext = Readonly<Record<string, string | number | boolean | undefined>>;

/** Options every API error takes: its context and the error that caused it. */
export interface ApiErrorOptions {
  context?: ErrorContext;
  cause?: unknown;
}

/** The base of the API's refusals: a message for the caller, a kind and its context. */
export abstract class ApiError extends Error {
  /** Which refusal this is. */
  abstract readonly kind: ApiErrorKind;
  /** The values the message quotes. */
  readonly context: ErrorContext;

  constructor(message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.context = options.context ?? {};
  }
}

/** The request itself is wrong: a missing field, a malformed id, an undecodable body. */
export class InvalidArgumentError extends ApiError {
  readonly kind = "invalid-argument";
}

/** What the request names does not exist (a path under a file root). */
export class PathNotFoundError extends ApiError {
  readonly kind = "not-found";
}

/** The caller's role, the node's mode or a file root refuses the request. */
export class PermissionDeniedError extends ApiError {
  readonly kind = "permission-denied";
}

/** The call carries no verified caller. */
export class UnauthenticatedError extends ApiError {
  readonly kind = "unauthenticated";
}

/** The node is not in a state the request needs (no containerd, a directory where a file is read). */
export class FailedPreconditionError extends ApiError {
  readonly kind = "failed-precondition";
}

/** A budget is spent: a message size, a read budget, a rate. */
export class ResourceExhaustedError extends ApiError {
  readonly kind = "resource-exhausted";
}

/** Something the request needs did not answer (containerd's CRI, a time server). */
export class UnavailableError extends ApiError {
  readonly kind = "unavailable";
}

/** This machined runs without what the RPC needs (dev mode wires only some parts). */
export class UnimplementedError extends ApiError {
  readonly kind = "unimplemented";
}

/** The call's deadline passed before it finished. */
export class DeadlineExceededError extends ApiError {
  readonly kind = "deadline-exceeded";
}

/** The caller went away or cancelled the call. */
export class CanceledError extends ApiError {
  readonly kind = "canceled";
}
