/**
 * Processes for the service supervisor: spawn with credentials, session,
 * cgroup, piped output and a sandbox (a seccomp filter, the capabilities
 * kept); signal a process or its group; one stream of every reaped exit
 * (orphans included). {@link nativeProcessBackend} is the
 * real thing; {@link FakeProcessBackend} simulates scripted processes.
 *
 * @example
 * ```ts
 * import { nativeProcessBackend, readLines } from "./platform/process/mod.ts";
 * const backend = nativeProcessBackend();
 * const h = await backend.spawn({ argv: ["/bin/echo", "hi"], env: { PATH: "/bin" } });
 * for await (const line of readLines(h.stdout!)) console.log(line);
 * console.log(await h.exited); // { pid, code: 0, signal: null, coreDumped: false }
 * ```
 * @module
 */
export type {
  ProcessBackend,
  ProcessExit,
  ProcessHandle,
  ProcessSpec,
  SignalTarget,
  StdioMode,
} from "./backend.ts";
export { NativeProcessBackend, nativeProcessBackend } from "./backend_native.ts";
export {
  FakeProcess,
  FakeProcessBackend,
  type FakeProcessBackendOptions,
  type FakeProgram,
} from "./backend_fake.ts";
export {
  processBackendConformance,
  type ProcessFixture,
  type ProcessPrograms,
  withTimeout,
} from "./backend_conformance.ts";
export { readLines } from "./lines.ts";
export {
  CAPABILITIES,
  type CapabilityName,
  capabilityNames,
  capabilityNumber,
  declaredSandbox,
  parseSandboxStatus,
  type ProcessSandbox,
  readSandbox,
  type SandboxInForce,
  SECCOMP_PROFILES,
  type SeccompProfile,
} from "./sandbox.ts";
export {
  type OciSeccompArg,
  type OciSeccompProfile,
  type OciSeccompRule,
  SECCOMP_ACTIONS,
  SECCOMP_ARCHITECTURES,
  SECCOMP_COMPARISONS,
  type SeccompAction,
  type SeccompComparison,
} from "./seccomp_profile.ts";
export { SYSCALL_NAMES } from "./syscall_names.ts";
export { collectRun, drainText, runTool, TOOL_PATH, ToolError, type ToolRun } from "./run_tool.ts";
export { AsyncQueue } from "./async_queue.ts";
export { type SignalName, signalName, signalNumber, SIGNALS } from "./signals.ts";
