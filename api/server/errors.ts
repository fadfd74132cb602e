/**
 * Errors become Connect codes here and nowhere else: the API's typed refusals
 * (api/errors, one table), store errors, unknown service and log ids, bad
 * arguments, mapping failures, PKI errors, /proc reads and the node actions'
 * typed refusals (apply, reset, upgrade) each get their code; anything else is
 * Internal. The original error stays attached as `cause`.
 *
 * This is the only server-side file that constructs a ConnectError
 * (no_connect_error_test.ts keeps it so). Two exceptions, by design: the fake
 * CRI server (cri/fake_cri_server.ts) plays a foreign gRPC server, and the
 * client side (machinectl) only reads codes.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ApplyConfigurationResponseSchema } from "../gen/machined/v1/machine_pb.ts";
import { ProcError } from "../../platform/procfs/mod.ts";
import { ApiError, type ApiErrorKind } from "../errors/mod.ts";
import {
  ApplyRefusedError,
  ConfigBaseChangedError,
  ConfigRejectedError,
} from "./config_applier.ts";
import { isPatchError } from "../../config/mod.ts";
import { ResetRefusedError, UnlockRefusedError, UpgradeRefusedError } from "./node_actions.ts";
import {
  isAlreadyExists,
  isConflict,
  isFinalizersPending,
  isNotFound,
  isOwnerConflict,
  isPhaseConflict,
} from "../../runtime/mod.ts";
import { isPkiError } from "../../pki/mod.ts";
import { ResourceMappingError } from "../mapping/mod.ts";
import { isUnknownIdError } from "./service_control.ts";

/** The code of each kind of API refusal: the one mapping, pinned by errors_test.ts. */
export const API_ERROR_CODES: Readonly<Record<ApiErrorKind, Code>> = {
  "invalid-argument": Code.InvalidArgument,
  "not-found": Code.NotFound,
  "permission-denied": Code.PermissionDenied,
  "unauthenticated": Code.Unauthenticated,
  "failed-precondition": Code.FailedPrecondition,
  "resource-exhausted": Code.ResourceExhausted,
  "unavailable": Code.Unavailable,
  "unimplemented": Code.Unimplemented,
  "deadline-exceeded": Code.DeadlineExceeded,
  "canceled": Code.Canceled,
};

/** The code of each upgrade refusal. */
const UPGRADE_CODES: Record<UpgradeRefusedError["code"], Code> = {
  "permission-denied": Code.PermissionDenied,
  "invalid-argument": Code.InvalidArgument,
  "failed-precondition": Code.FailedPrecondition,
  "unavailable": Code.Unavailable,
  "data-loss": Code.DataLoss,
  "deadline-exceeded": Code.DeadlineExceeded,
  "resource-exhausted": Code.ResourceExhausted,
};

const UNLOCK_CODES: Record<UnlockRefusedError["code"], Code> = {
  "not-found": Code.NotFound,
  "failed-precondition": Code.FailedPrecondition,
  "permission-denied": Code.PermissionDenied,
  "invalid-argument": Code.InvalidArgument,
  "unavailable": Code.Unavailable,
};

/** The Connect code for an error raised below the API. */
export function codeOf(e: unknown): Code {
  if (e instanceof ConnectError) return e.code;
  if (e instanceof ApiError) return API_ERROR_CODES[e.kind];
  if (e instanceof UpgradeRefusedError) return UPGRADE_CODES[e.code];
  if (e instanceof UnlockRefusedError) return UNLOCK_CODES[e.code];
  if (e instanceof ResetRefusedError) {
    return e.code === "unavailable" ? Code.Unavailable : Code.FailedPrecondition;
  }
  // A mode that cannot apply: the changed and reboot-only fields ride as a detail.
  if (e instanceof ApplyRefusedError) return Code.FailedPrecondition;
  // A read-modify-write that lost a race: read again and retry (docs/decisions.md).
  if (e instanceof ConfigBaseChangedError) return Code.Aborted;
  // A config patch that cannot apply names its patch, operation and pointer.
  if (isPatchError(e)) return Code.InvalidArgument;
  // A /proc read that failed names its path.
  if (e instanceof ProcError) return Code.Unavailable;
  if (isNotFound(e) || isUnknownIdError(e)) return Code.NotFound;
  if (isAlreadyExists(e)) return Code.AlreadyExists;
  if (isConflict(e)) return Code.Aborted;
  if (isOwnerConflict(e)) return Code.PermissionDenied;
  if (isPhaseConflict(e) || isFinalizersPending(e)) return Code.FailedPrecondition;
  if (e instanceof ResourceMappingError) return Code.InvalidArgument;
  if (isPkiError(e, "invalid")) return Code.InvalidArgument;
  if (e instanceof TypeError || e instanceof RangeError) return Code.InvalidArgument;
  if (e instanceof DOMException && e.name === "AbortError") return Code.Canceled;
  return Code.Internal;
}

/** Wraps any error as a ConnectError with the right code, keeping it as `cause`. */
export function toConnectError(e: unknown): ConnectError {
  if (e instanceof ConnectError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new ConnectError(message, codeOf(e), undefined, detailsOf(e), e);
}

/** Details a client reads instead of parsing the message. */
function detailsOf(e: unknown): ConstructorParameters<typeof ConnectError>[3] {
  if (e instanceof ConfigRejectedError) {
    return [{ desc: ApplyConfigurationResponseSchema, value: e.response }];
  }
  if (!(e instanceof ApplyRefusedError)) return undefined;
  return [{
    desc: ApplyConfigurationResponseSchema,
    value: create(ApplyConfigurationResponseSchema, {
      changed: [...e.changed],
      rebootFields: [...e.rebootFields],
    }),
  }];
}

/** An interceptor applying {@link toConnectError} to unary and streaming handlers alike. */
export const errorMappingInterceptor: Interceptor = (next) => async (req) => {
  try {
    const res = await next(req);
    if (!res.stream) return res;
    return { ...res, message: mapStream(res.message) };
  } catch (e) {
    throw toConnectError(e);
  }
};

async function* mapStream<T>(source: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* source;
  } catch (e) {
    throw toConnectError(e);
  }
}
