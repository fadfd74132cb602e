/**
 * machined's side of MachineService: reads the store, runs node actions, and
 * streams watches and events. It runs behind apid, on the Unix socket; the
 * caller's identity arrives in the context (see internal_server.ts).
 */
import { create } from "@bufbuild/protobuf";
import { durationMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { type ErrorContext, InvalidArgumentError } from "../errors/mod.ts";
import {
  EventsResponseSchema,
  GenerateClientConfigurationResponseSchema,
  GetResponseSchema,
  ListResponseSchema,
  MachineService,
  RebootResponseSchema,
  ShutdownResponseSchema,
  VersionResponseSchema,
  type WatchRequest,
} from "../gen/machined/v1/machine_pb.ts";
import {
  type MachineStore,
  resolveResourceType,
  RESOURCE_DESCRIPTORS,
  RESOURCE_TYPES,
  type ResourceSpecs,
  type ResourceType,
} from "../../resources/mod.ts";
import { roleFromProto, selectorFromProto, toProtoResource } from "../mapping/mod.ts";
import { type CallerIdentity, callerKey, redactResource } from "../auth/mod.ts";
import type { MaintenanceGate } from "./maintenance_gate.ts";
import type { NodeActions } from "./node_actions.ts";
import { rebootModeFromProto } from "./reboot_mode.ts";
import type { EventSource } from "./event_source.ts";
import { clientCertLifetimeMs, type ClientConfigIssuer } from "./client_config_issuer.ts";
import type { AuditLog } from "./audit.ts";
import type { Role } from "../../pki/mod.ts";
import { certificateNameProblem } from "../../pki/mod.ts";
import { createNodeServiceHandlers, type NodeServiceDeps } from "./node_service_handlers.ts";
import { createObserveHandlers, type ObserveDeps } from "./observe_handlers.ts";
import { createResetHandler } from "./reset_handler.ts";
import { createUnlockHandler } from "./unlock_handler.ts";
import { createUpgradeHandlers } from "./upgrade_handler.ts";
import { createObservabilityHandlers, type ObservabilityDeps } from "./observability_handlers.ts";
import { createImagePullHandler } from "./image_pull_handler.ts";
import { createWatchFanout, type WatchFanout } from "./watch_fanout.ts";
import {
  createCopyHandler,
  createFileHandlers,
  createUsageHandler,
  type FileDeps,
} from "./files/mod.ts";

/** Namespace value meaning "every namespace" in List and Watch. */
export const ALL_NAMESPACES = "*";

/**
 * What the handlers need from machined. The {@link NodeServiceDeps} members
 * (services, logs, kernelLog, configs) are optional: an RPC whose dependency
 * is absent answers Unimplemented.
 */
export interface MachineServiceDeps extends NodeServiceDeps, ObserveDeps, ObservabilityDeps {
  readonly store: MachineStore;
  readonly actions: NodeActions;
  readonly events: EventSource;
  readonly clientConfigs: ClientConfigIssuer;
  /**
   * machined's logger, for the audit line of every mutating call (audit.ts).
   * machined always passes it; tests may leave it out (no audit lines).
   */
  readonly audit?: AuditLog;
  /** Maintenance mode (api/server/maintenance_gate.ts); absent: maintenance callers are refused. */
  readonly maintenance?: MaintenanceGate;
  /** FileList and FileRead (files/); absent: they answer Unimplemented. */
  readonly files?: FileDeps;
}

/** The MachineService implementation over machined's store and actions. */
export function createMachineService(
  deps: MachineServiceDeps,
  /** The Watch fan-out, when the server shares it with its direct Watch route (watch_route.ts). */
  fanout?: WatchFanout<ResourceSpecs>,
): ServiceImpl<typeof MachineService> {
  const { store, actions } = deps;
  return {
    ...createNodeServiceHandlers(deps),
    ...createObserveHandlers(deps),
    ...createResetHandler(actions),
    ...createUnlockHandler(actions),
    ...createUpgradeHandlers(actions),
    ...createObservabilityHandlers(deps),
    ...createImagePullHandler(deps),
    ...createFileHandlers(deps.files),
    ...createUsageHandler(deps.files),
    ...createCopyHandler(deps.files),
    ...createResourceHandlers(store, fanout ?? createWatchFanout(store)),
    ...createLifecycleHandlers(deps),
    ...createClientConfigHandler(deps.clientConfigs),
  };
}

/** Get, List and Watch: the store as the caller's role may see it (secrets redacted). */
function createResourceHandlers(
  store: MachineStore,
  watches: WatchFanout<ResourceSpecs>,
): Pick<ServiceImpl<typeof MachineService>, "get" | "list" | "watch"> {
  return {
    get(req, ctx) {
      const type = requireType(req.type);
      if (req.id === "") throw invalid("Get needs an id", { rpc: "Get", type: req.type });
      const namespace = req.namespace || RESOURCE_DESCRIPTORS[type].namespace;
      const role = callerRole(ctx);
      return create(GetResponseSchema, {
        resource: toProtoResource(redactResource(store.get(type, namespace, req.id), role)),
      });
    },

    list(req, ctx) {
      const type = requireType(req.type);
      const resources = store.list(type, {
        namespace: namespaceFilter(type, req.namespace),
        labels: selectorFromProto(req.selector),
      });
      const role = callerRole(ctx);
      return create(ListResponseSchema, {
        resources: resources.map((r) => toProtoResource(redactResource(r, role))),
      });
    },

    watch(req, ctx) {
      const { type, namespace, id } = watchSelection(req);
      return watches.stream(type, { namespace, id, signal: ctx.signal }, callerRole(ctx));
    },
  };
}

/** Version, the event stream, Reboot and Shutdown: the node's own life over NodeActions. */
function createLifecycleHandlers(
  { store, actions, events }: Pick<MachineServiceDeps, "store" | "actions" | "events">,
): Pick<ServiceImpl<typeof MachineService>, "version" | "events" | "reboot" | "shutdown"> {
  return {
    async version() {
      const info = await actions.version();
      // The kernel's hostname as last read back (HostnameStatus), so a hostname
      // applied over the API shows; NodeActions' answer until it is known.
      const live = store.list("HostnameStatus")[0]?.spec.hostname;
      return create(VersionResponseSchema, { ...info, hostname: live || info.hostname });
    },

    async *events(req, ctx) {
      const kinds = new Set(req.kinds);
      const tail = req.tail ?? Number.MAX_SAFE_INTEGER;
      for await (const e of events.subscribe({ signal: ctx.signal, tail })) {
        if (kinds.size > 0 && !kinds.has(e.kind) && e.kind !== "overflow") continue;
        yield create(EventsResponseSchema, {
          event: {
            kind: e.kind,
            subject: e.subject,
            action: e.action,
            message: e.message,
            seq: BigInt(e.seq),
            fields: { ...e.fields },
            time: timestampFromDate(new Date(e.time)),
            monoMs: e.monoMs,
          },
        });
      }
    },

    async reboot(req, ctx) {
      await actions.reboot(requester(ctx), rebootModeFromProto(req.mode));
      return create(RebootResponseSchema);
    },

    async shutdown(_req, ctx) {
      await actions.shutdown(requester(ctx));
      return create(ShutdownResponseSchema);
    },
  };
}

/**
 * GenerateClientConfiguration: every field is checked before the issuer makes a key, so a
 * refused request costs nothing.
 */
function createClientConfigHandler(
  clientConfigs: ClientConfigIssuer,
): Pick<ServiceImpl<typeof MachineService>, "generateClientConfiguration"> {
  return {
    async generateClientConfiguration(req) {
      const role = roleFromProto(req.role);
      if (req.name.trim() === "") throw invalid("GenerateClientConfiguration needs a name");
      // Refused at the door, before any key is made: the name becomes the CN.
      const problem = certificateNameProblem(req.name);
      if (problem) throw invalid(`GenerateClientConfiguration: name ${problem}`);
      const badEndpoint = req.endpoints.find((e) => /[\p{Cc}\p{Cf}\p{Z}]/u.test(e));
      if (badEndpoint !== undefined) {
        throw invalid(
          `GenerateClientConfiguration: endpoint ${JSON.stringify(badEndpoint)} holds a ` +
            `space, control or format character`,
          { endpoint: badEndpoint },
        );
      }
      const lifetimeMs = req.lifetime ? durationMs(req.lifetime) : undefined;
      // Checked before any key is made: InvalidArgument past the cap.
      if (lifetimeMs !== undefined) {
        try {
          clientCertLifetimeMs(lifetimeMs);
        } catch (e) {
          throw new InvalidArgumentError((e as Error).message, {
            context: { rpc: "GenerateClientConfiguration", lifetimeMs },
            cause: e,
          });
        }
      }
      const issued = await clientConfigs.issue({
        role,
        name: req.name,
        endpoints: req.endpoints,
        lifetimeMs,
      });
      return create(GenerateClientConfigurationResponseSchema, issued);
    },
  };
}

/**
 * Resolves a type name or alias.
 * @throws InvalidArgumentError listing the known types.
 */
export function requireType(name: string): ResourceType {
  const type = resolveResourceType(name);
  if (type) return type;
  throw invalid(
    `Unknown resource type "${name}"; known types: ${RESOURCE_TYPES.join(", ")}`,
    { type: name },
  );
}

/**
 * What a Watch request selects: its type (resolved), namespace (`*`: every one;
 * empty: the type's default) and id.
 * @throws InvalidArgumentError for an unknown type.
 */
export function watchSelection(
  req: Pick<WatchRequest, "type" | "namespace" | "id">,
): { type: ResourceType; namespace?: string; id?: string } {
  const type = requireType(req.type);
  return { type, namespace: namespaceFilter(type, req.namespace), id: req.id || undefined };
}

function namespaceFilter(type: ResourceType, namespace: string): string | undefined {
  if (namespace === ALL_NAMESPACES) return undefined;
  return namespace || RESOURCE_DESCRIPTORS[type].namespace;
}

function callerRole(ctx: HandlerContext): Role | undefined {
  return ctx.values.get(callerKey)?.role;
}

function requester(ctx: HandlerContext): { name: string; role: string } {
  const caller: CallerIdentity | undefined = ctx.values.get(callerKey);
  return { name: caller?.name ?? "", role: caller?.role ?? "" };
}

function invalid(message: string, context: ErrorContext = {}): InvalidArgumentError {
  return new InvalidArgumentError(message, { context });
}

export { MachineService };
