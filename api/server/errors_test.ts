import { deepEqual, equal, ok } from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ApplyConfigurationResponseSchema } from "../gen/machined/v1/machine_pb.ts";
import { ConfigState } from "../gen/machined/v1/resources_pb.ts";
import {
  type ApiError,
  type ApiErrorKind,
  CanceledError,
  DeadlineExceededError,
  FailedPreconditionError,
  InvalidArgumentError,
  PathNotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnauthenticatedError,
  UnavailableError,
  UnimplementedError,
} from "../errors/mod.ts";
import { ConfigRejectedError } from "./config_applier.ts";
import { API_ERROR_CODES, codeOf, toConnectError } from "./errors.ts";

// The wire codes clients see today, written out by hand: changing one is a breaking change.
const PINNED: Record<ApiErrorKind, Code> = {
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

// One error of each class, so a class with the wrong kind fails here.
const SAMPLES: Record<ApiErrorKind, (m: string) => ApiError> = {
  "invalid-argument": (m) => new InvalidArgumentError(m),
  "not-found": (m) => new PathNotFoundError(m),
  "permission-denied": (m) => new PermissionDeniedError(m),
  "unauthenticated": (m) => new UnauthenticatedError(m),
  "failed-precondition": (m) => new FailedPreconditionError(m),
  "resource-exhausted": (m) => new ResourceExhaustedError(m),
  "unavailable": (m) => new UnavailableError(m),
  "unimplemented": (m) => new UnimplementedError(m),
  "deadline-exceeded": (m) => new DeadlineExceededError(m),
  "canceled": (m) => new CanceledError(m),
};

Deno.test("the mapping table is the pinned one, kind by kind", () => {
  deepEqual(API_ERROR_CODES, PINNED);
});

Deno.test("each API error class maps to its code, keeping message, context and cause", () => {
  for (const [kind, code] of Object.entries(PINNED) as [ApiErrorKind, Code][]) {
    const cause = new Error("below");
    const e = SAMPLES[kind](`refused: ${kind}`);
    equal(e.kind, kind);
    equal(codeOf(e), code, kind);
    const c = toConnectError(e);
    ok(c instanceof ConnectError);
    equal(c.code, code, kind);
    equal(c.rawMessage, `refused: ${kind}`);
    equal(c.cause, e);
    const withCause = new UnavailableError("x", { context: { socket: "/s" }, cause });
    equal(withCause.cause, cause);
    deepEqual(withCause.context, { socket: "/s" });
  }
});

Deno.test("a rejected config is InvalidArgument with the response as a detail", () => {
  const response = create(ApplyConfigurationResponseSchema, {
    state: ConfigState.INVALID,
    errors: [{ path: "machine.hostname", message: "bad" }],
  });
  const c = toConnectError(new ConfigRejectedError("Machine config is invalid", response));
  equal(c.code, Code.InvalidArgument);
  const [detail] = c.findDetails(ApplyConfigurationResponseSchema);
  equal(detail?.errors[0]?.path, "machine.hostname");
});

Deno.test("anything else keeps its old code", () => {
  equal(codeOf(new TypeError("t")), Code.InvalidArgument);
  equal(codeOf(new ConnectError("c", Code.Aborted)), Code.Aborted);
  equal(codeOf(new Error("e")), Code.Internal);
});
