/**
 * The real machined parts fit the API's narrow interfaces as they are: the
 * supervisor is a ServiceControl and a LogSource, platform/kmsg's backends
 * are a KernelLog, and the supervisor's unknown-id errors become NotFound.
 */
import { equal } from "node:assert/strict";
import { Code } from "@connectrpc/connect";
import { type Supervisor, UnknownLogError, UnknownServiceError } from "../../supervisor/mod.ts";
import type { FakeKmsgBackend, NativeKmsgBackend } from "../../platform/kmsg/mod.ts";
import { codeOf } from "./errors.ts";
import type { KernelLog } from "./kernel_log.ts";
import type { LogSource, ServiceControl } from "./service_control.ts";

// Compile-time: a change on either side that breaks the fit fails `deno check`.
type Fits<T, U extends T> = U;
export type _SupervisorIsServiceControl = Fits<ServiceControl, Supervisor>;
export type _SupervisorIsLogSource = Fits<LogSource, Supervisor>;
export type _NativeKmsgIsKernelLog = Fits<KernelLog, NativeKmsgBackend>;
export type _FakeKmsgIsKernelLog = Fits<KernelLog, FakeKmsgBackend>;

Deno.test("the supervisor's unknown service and log errors are NotFound", () => {
  equal(codeOf(new UnknownServiceError("nope")), Code.NotFound);
  equal(codeOf(new UnknownLogError("nope")), Code.NotFound);
  equal(codeOf(new Error("No service")), Code.Internal);
});
