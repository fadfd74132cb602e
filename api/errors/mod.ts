/**
 * The API's typed refusals, below every API room so that auth rules, handlers
 * and the API host throw them alike; api/server/errors.ts maps them to Connect
 * codes at the edge, in one table.
 *
 * @example
 * ```ts
 * import { InvalidArgumentError } from "./api/errors/mod.ts";
 * throw new InvalidArgumentError("ServiceStart needs an id", { context: { rpc: "ServiceStart" } });
 * ```
 * @module
 */
export {
  ApiError,
  type ApiErrorKind,
  type ApiErrorOptions,
  CanceledError,
  DeadlineExceededError,
  type ErrorContext,
  FailedPreconditionError,
  InvalidArgumentError,
  PathNotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnauthenticatedError,
  UnavailableError,
  UnimplementedError,
} from "./api_errors.ts";
