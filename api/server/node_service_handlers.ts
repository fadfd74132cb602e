/**
 * The MachineService handlers that reach past the store into machined's
 * moving parts: services (list, start, stop, restart), logs, the kernel log,
 * and applying a machine config. Each dependency is optional, since dev mode
 * may not wire them all; an RPC whose dependency is absent answers
 * Unimplemented, naming what is missing.
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { InvalidArgumentError, UnimplementedError } from "../errors/mod.ts";
import {
  ApplyConfigurationResponseSchema,
  type ConfigPatch,
  ConfigPatchType,
  type MachineService,
  ServiceListResponseSchema,
  ServiceRestartResponseSchema,
  ServiceStartResponseSchema,
  ServiceStopResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import {
  applyModeFromProto,
  applyModeToProto,
  configStateToProto,
  kernelLogToProto,
  logEntryToProto,
  serviceInfoToProto,
} from "../mapping/mod.ts";
import { type CallerIdentity, callerKey, redactServiceSpec, visibilityOf } from "../auth/mod.ts";
import {
  type ConfigApplier,
  type ConfigApplyResult,
  ConfigRejectedError,
  configRejectionMessage,
} from "./config_applier.ts";
import { previewConfigChange } from "./config_preview.ts";
import { type KernelLog, readKernelLog } from "./kernel_log.ts";
import { type PatchText, type PatchType, SERVICE_ID } from "../../config/mod.ts";
import type { LogSource, ServiceControl, ServiceView } from "./service_control.ts";

/** The optional dependencies of these handlers. */
export interface NodeServiceDeps {
  /** The service supervisor (ServiceList/Start/Stop/Restart). */
  readonly services?: ServiceControl;
  /** Service logs and machined's own (Logs). */
  readonly logs?: LogSource;
  /** The kernel log (Dmesg). */
  readonly kernelLog?: KernelLog;
  /** Config validation and application (ApplyConfiguration). */
  readonly configs?: ConfigApplier;
}

type NodeServiceMethods =
  | "serviceList"
  | "serviceStart"
  | "serviceStop"
  | "serviceRestart"
  | "logs"
  | "dmesg"
  | "applyConfiguration";

/** The handlers of the RPCs backed by {@link NodeServiceDeps}. */
export function createNodeServiceHandlers(
  deps: NodeServiceDeps,
): Pick<ServiceImpl<typeof MachineService>, NodeServiceMethods> {
  return {
    ...createServiceHandlers(deps),
    ...createLogHandlers(deps),
    ...createApplyConfigurationHandler(deps),
  };
}

/** ServiceList, ServiceStart, ServiceStop and ServiceRestart over the supervisor. */
function createServiceHandlers(
  deps: NodeServiceDeps,
): Pick<
  ServiceImpl<typeof MachineService>,
  "serviceList" | "serviceStart" | "serviceStop" | "serviceRestart"
> {
  const services = () => need(deps.services, "the service RPCs", "a service supervisor");
  // Every ServiceInfo leaves through here, redacted for the caller's role.
  const info = (view: ServiceView, ctx: HandlerContext) =>
    serviceInfoToProto({
      ...view,
      spec: redactServiceSpec(view.spec, visibilityOf(ctx.values.get(callerKey)?.role)),
    });
  return {
    serviceList(_req, ctx) {
      return create(ServiceListResponseSchema, {
        services: services().list().map((s) => info(s, ctx)),
      });
    },

    async serviceStart(req, ctx) {
      const ctl = services();
      await ctl.start(requireId("ServiceStart", req.id));
      return create(ServiceStartResponseSchema, { service: info(ctl.get(req.id), ctx) });
    },

    async serviceStop(req, ctx) {
      const ctl = services();
      await ctl.stop(requireId("ServiceStop", req.id));
      return create(ServiceStopResponseSchema, { service: info(ctl.get(req.id), ctx) });
    },

    async serviceRestart(req, ctx) {
      const ctl = services();
      await ctl.restart(requireId("ServiceRestart", req.id));
      return create(ServiceRestartResponseSchema, { service: info(ctl.get(req.id), ctx) });
    },
  };
}

/** Logs (a service's or machined's own) and Dmesg (the kernel log). */
function createLogHandlers(
  deps: NodeServiceDeps,
): Pick<ServiceImpl<typeof MachineService>, "logs" | "dmesg"> {
  return {
    async *logs(req, ctx) {
      const source = need(deps.logs, "Logs", "a log source");
      const id = requireId("Logs", req.id);
      const lines = source.logs(id, { tail: req.tail, follow: req.follow, signal: ctx.signal });
      for await (const line of lines) yield logEntryToProto(line);
    },

    async *dmesg(req, ctx) {
      const log = need(deps.kernelLog, "Dmesg", "a kernel log reader");
      const records = readKernelLog(log, {
        tail: req.tail,
        follow: req.follow,
        signal: ctx.signal,
      });
      for await (const r of records) yield kernelLogToProto(r);
    },
  };
}

/** ApplyConfiguration: validate, apply (or dry-run) and confirm a machine config. */
function createApplyConfigurationHandler(
  deps: NodeServiceDeps,
): Pick<ServiceImpl<typeof MachineService>, "applyConfiguration"> {
  return {
    async applyConfiguration(req, ctx) {
      const applier = need(deps.configs, "ApplyConfiguration", "a config applier");
      if (req.confirm) {
        if (req.configYaml.trim() !== "" || req.dryRun) {
          throw new InvalidArgumentError(
            "ApplyConfiguration with confirm takes no config_yaml and no dry_run",
            { context: { rpc: "ApplyConfiguration", dryRun: req.dryRun } },
          );
        }
        return applyResponse(await applier.confirm(requester(ctx)), false);
      }
      const patching = req.patches.length > 0;
      if (patching === (req.configYaml.trim() !== "")) {
        throw new InvalidArgumentError(
          "ApplyConfiguration needs config_yaml or patches (one of them, not both)",
          { context: { rpc: "ApplyConfiguration", patches: req.patches.length } },
        );
      }
      const options = {
        dryRun: req.dryRun,
        by: requester(ctx),
        mode: applyModeFromProto(req.mode),
        ...(req.tryTimeoutMs ? { tryTimeoutMs: req.tryTimeoutMs } : {}),
        ...(req.baseSha256 ? { baseSha256: req.baseSha256 } : {}),
      };
      // An ApplyRefusedError maps to FailedPrecondition with its fields, a
      // PatchError to InvalidArgument and a changed base to Aborted (errors.ts).
      const result = patching
        ? await applier.patch(req.patches.map(patchFromProto), options)
        : await applier.apply(req.configYaml, options);
      const response = applyResponse(result, req.dryRun);
      if (result.state === "invalid") {
        // A dry run too: the same code and errors as the apply it stands for.
        // The errors ride along as a detail (errors.ts), so clients need not parse the message.
        throw new ConfigRejectedError(configRejectionMessage(result.errors), response);
      }
      return response;
    },
  };
}

const PATCH_TYPES: Readonly<Record<ConfigPatchType, PatchType | undefined>> = {
  [ConfigPatchType.UNSPECIFIED]: undefined,
  [ConfigPatchType.JSON]: "json",
  [ConfigPatchType.MERGE]: "merge",
};

function patchFromProto(p: ConfigPatch): PatchText {
  const type = PATCH_TYPES[p.type];
  return type ? { text: p.text, type } : { text: p.text };
}

function applyResponse(r: ConfigApplyResult, dryRun: boolean) {
  const changed = r.changed ?? [];
  const preview = r.requested ? previewConfigChange(r.current, r.requested, changed) : undefined;
  return create(ApplyConfigurationResponseSchema, {
    state: configStateToProto(r.state),
    errors: r.errors.map((e) => ({ ...e })),
    applied: r.state === "valid" && !dryRun,
    ...(r.mode ? { mode: applyModeToProto(r.mode) } : {}),
    changed: [...changed],
    rebootFields: [...(r.rebootFields ?? [])],
    ...(preview ? { ...preview, domains: [...preview.domains] } : {}),
    reboots: r.state === "valid" && r.mode === "reboot" && r.refusal === undefined,
    refusal: r.refusal ?? "",
  });
}

/**
 * @throws UnimplementedError when machined runs without `what`.
 */
function need<T>(dep: T | undefined, rpc: string, what: string): T {
  if (dep !== undefined) return dep;
  throw new UnimplementedError(
    `${rpc} ${rpc.startsWith("the ") ? "are" : "is"} not available: ` +
      `this machined runs without ${what}`,
    { context: { rpc, missing: what } },
  );
}

/**
 * A service id as the config allows it (SERVICE_ID: lowercase letters,
 * digits, `.`, `_`, `-`), refused at the door otherwise: an id is printed by
 * every client and lands in logs and audit lines, and no service can have an
 * id with a control character, so a request carrying one is a mistake or an
 * attempt, never a lookup (InvalidArgument, not NotFound).
 * @throws InvalidArgumentError naming the RPC and the field
 */
function requireId(rpc: string, id: string): string {
  if (id === "") throw new InvalidArgumentError(`${rpc} needs an id`, { context: { rpc } });
  if (!SERVICE_ID.test(id)) {
    throw new InvalidArgumentError(
      `${rpc}: invalid id ${JSON.stringify(id)}: a service id is 1 to 63 lowercase letters, ` +
        `digits, '.', '_' or '-', starting with a letter or digit (no control characters)`,
      { context: { rpc, id } },
    );
  }
  return id;
}

function requester(ctx: HandlerContext): { name: string; role: string } {
  const caller: CallerIdentity | undefined = ctx.values.get(callerKey);
  return { name: caller?.name ?? "", role: caller?.role ?? "" };
}
