/**
 * One session with a node: learns its boot from MachineStatus, then feeds the
 * reducer from the streams that exist (Watch of MachineStatus, ServiceStatus
 * and HostnameStatus, Events, machined's Logs) and from the sampler. The
 * session ends when any of them ends or fails; the connection loop
 * (sources.ts) then reconnects.
 */
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { MachineService } from "../../api/gen/machined/v1/machine_pb.ts";
import { fromProtoResource, logEntryFromProto } from "../../api/mapping/mod.ts";
import type { Resource as ProtoResource } from "../../api/gen/machined/v1/resources_pb.ts";
import type {
  HostnameStatusSpec,
  MachineResource,
  MachineStatusSpec,
  ServiceStatusSpec,
} from "../../resources/mod.ts";
import { describeError } from "../errors.ts";
import type { DashboardAction, OptionalStream } from "./state.ts";

/** The node's API as the dashboard uses it. */
export type MachineApi = Client<typeof MachineService>;

/** Feeds actions to the state. */
export type Dispatch = (a: DashboardAction) => void;

/** Past events and log lines replayed on (re)connect: what the screen can show and more. */
const REPLAY = 100;
/** A unary call that takes longer than this means the node is gone. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * Runs until a stream ends or fails (rethrown; a normal end is an error too,
 * since following streams end only with the node) or `signal` aborts.
 */
export async function runSession(
  api: MachineApi,
  dispatch: Dispatch,
  signal: AbortSignal,
  sampler: (api: MachineApi, signal: AbortSignal) => Promise<never>,
): Promise<void> {
  const ms = await api.get(
    { type: "MachineStatus", id: "machine" },
    { signal, timeoutMs: CALL_TIMEOUT_MS },
  );
  if (ms.resource) machineStatus(fromProtoResource(ms.resource), dispatch);
  const v = await api.version({}, { signal, timeoutMs: CALL_TIMEOUT_MS });
  dispatch({ type: "version", version: v.version, hostname: v.hostname });
  const inner = new AbortController();
  const stop = () => inner.abort();
  signal.addEventListener("abort", stop, { once: true });
  const ended = (what: string) => () => {
    throw new Error(`the ${what} stream ended`);
  };
  try {
    await Promise.race([
      watch(api, "MachineStatus", inner.signal, (r) => machineStatus(r, dispatch)).then(
        ended("MachineStatus watch"),
      ),
      watchServices(api, inner.signal, dispatch).then(ended("ServiceStatus watch")),
      watch(api, "HostnameStatus", inner.signal, (r) => {
        dispatch({ type: "hostname", hostname: (r.spec as HostnameStatusSpec).hostname });
      }).then(ended("HostnameStatus watch")),
      optional("events", events(api, inner.signal, dispatch), inner.signal, dispatch)
        .then(ended("Events")),
      optional("logs", logs(api, inner.signal, dispatch), inner.signal, dispatch)
        .then(ended("Logs")),
      sampler(api, inner.signal),
    ]);
  } finally {
    signal.removeEventListener("abort", stop);
    inner.abort();
  }
}

/**
 * A stream the node refuses (Unimplemented, PermissionDenied, NotFound) is
 * shown as refused and the session goes on without it; reconnecting would
 * only be refused again. Any other failure ends the session.
 */
async function optional(
  stream: OptionalStream,
  run: Promise<void>,
  signal: AbortSignal,
  dispatch: Dispatch,
): Promise<void> {
  try {
    await run;
  } catch (e) {
    if (!refused(e) || signal.aborted) throw e;
    dispatch({ type: "refused", stream, error: describeError(e) });
    await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
    throw e;
  }
}

/** The node answered, and the answer is no: asking again will not change it. */
export function refused(e: unknown): boolean {
  return e instanceof ConnectError &&
    [Code.Unimplemented, Code.PermissionDenied, Code.NotFound].includes(e.code);
}

/** The boot, then the stage; a MachineStatus created anew is a new boot. */
function machineStatus(r: MachineResource, dispatch: Dispatch): void {
  const created = r.metadata.created;
  dispatch({ type: "boot", bootKey: created.toISOString(), startedAt: created.getTime() });
  const s = r.spec as MachineStatusSpec;
  dispatch({
    type: "machineStatus",
    stage: s.stage,
    ready: s.ready,
    unmet: s.unmetConditions,
    mode: s.mode,
  });
}

async function watch(
  api: MachineApi,
  type: string,
  signal: AbortSignal,
  onResource: (r: MachineResource) => void,
  onGone?: (id: string) => void,
  onRestart?: () => void,
): Promise<void> {
  onRestart?.();
  for await (const ev of api.watch({ type }, { signal })) {
    const e = ev.event;
    const seen = (p: ProtoResource | undefined) => p && onResource(fromProtoResource(p));
    if (e.case === "created") seen(e.value);
    else if (e.case === "updated") seen(e.value.resource);
    else if (e.case === "destroyed" && e.value.metadata) onGone?.(e.value.metadata.id);
    else if (e.case === "overflow") onRestart?.();
  }
}

function watchServices(api: MachineApi, signal: AbortSignal, dispatch: Dispatch) {
  return watch(
    api,
    "ServiceStatus",
    signal,
    (r) => {
      const s = r.spec as ServiceStatusSpec;
      dispatch({
        type: "service",
        row: {
          id: r.metadata.id,
          state: s.state,
          healthy: s.healthy,
          restarts: s.restarts,
          pid: s.pid,
          message: s.message,
        },
      });
    },
    (id) => dispatch({ type: "serviceGone", id }),
    () => dispatch({ type: "servicesReset" }),
  );
}

async function events(api: MachineApi, signal: AbortSignal, dispatch: Dispatch) {
  for await (const r of api.events({ tail: REPLAY }, { signal })) {
    const e = r.event;
    if (!e) continue;
    dispatch({
      type: "event",
      event: {
        seq: Number(e.seq),
        time: e.time ? timestampMs(e.time) : Date.now(),
        kind: e.kind,
        subject: e.subject,
        action: e.action,
        message: e.message,
      },
    });
  }
}

async function logs(api: MachineApi, signal: AbortSignal, dispatch: Dispatch) {
  for await (const m of api.logs({ id: "machined", tail: REPLAY, follow: true }, { signal })) {
    const l = logEntryFromProto(m);
    dispatch({ type: "log", line: { seq: l.seq, time: l.time, text: l.text } });
  }
}
