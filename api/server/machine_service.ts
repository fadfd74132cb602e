/**
 * machined's side of MachineService: reads the store, runs node actions, and
 * streams watches and events. It runs behind apid, on the Unix socket; the
 * caller's identity arrives in the context (see internal_server.ts).
 */
import { create } from "@bufbuild/protobuf";
import { durationMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  EventsResponseSchema,
  GenerateClientConfigurationResponseSchema,
  GetResponseSchema,
  ListResponseSchema,
  MachineService,
  RebootResponseSchema,
  ShutdownResponseSchema,
  VersionResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import {
  type MachineStore,
  resolveResourceType,
  RESOURCE_DESCRIPTORS,
  RESOURCE_TYPES,
  type ResourceType,
} from "../../resources/mod.ts";
import {
  roleFromProto,
  selectorFromProto,
  toProtoResource,
  watchEventToProto,
} from "../mapping/mod.ts";
import { type CallerIdentity, callerKey } from "../auth/identity.ts";
import type { NodeActions } from "./node_actions.ts";
import type { EventSource } from "./event_source.ts";
import type { ClientConfigIssuer } from "./client_config_issuer.ts";
import { createNodeServiceHandlers, type NodeServiceDeps } from "./node_service_handlers.ts";

/** Namespace value meaning "every namespace" in List and Watch. */
export const ALL_NAMESPACES = "*";

/**
 * What the handlers need from machined. The {@link NodeServiceDeps} members
 * (services, logs, kernelLog, configs) are optional: an RPC whose dependency
 * is absent answers Unimplemented.
 */
export interface MachineServiceDeps extends NodeServiceDeps {
  readonly store: MachineStore;
  readonly actions: NodeActions;
  readonly events: EventSource;
  readonly clientConfigs: ClientConfigIssuer;
}

/** The MachineService implementation over machined's store and actions. */
export function createMachineService(
  deps: MachineServiceDeps,
): ServiceImpl<typeof MachineService> {
  const { store, actions, events, clientConfigs } = deps;
  return {
    ...createNodeServiceHandlers(deps),

    async version() {
      return create(VersionResponseSchema, await actions.version());
    },

    get(req) {
      const type = requireType(req.type);
      if (req.id === "") throw invalid("Get needs an id");
      const namespace = req.namespace || RESOURCE_DESCRIPTORS[type].namespace;
      return create(GetResponseSchema, {
        resource: toProtoResource(store.get(type, namespace, req.id)),
      });
    },

    list(req) {
      const type = requireType(req.type);
      const resources = store.list(type, {
        namespace: namespaceFilter(type, req.namespace),
        labels: selectorFromProto(req.selector),
      });
      return create(ListResponseSchema, { resources: resources.map((r) => toProtoResource(r)) });
    },

    async *watch(req, ctx) {
      const type = requireType(req.type);
      const watch = store.watch(type, {
        namespace: namespaceFilter(type, req.namespace),
        id: req.id || undefined,
        signal: ctx.signal,
      });
      try {
        for await (const event of watch) yield watchEventToProto(event);
      } finally {
        watch.close();
      }
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

    async reboot(_req, ctx) {
      await actions.reboot(requester(ctx));
      return create(RebootResponseSchema);
    },

    async shutdown(_req, ctx) {
      await actions.shutdown(requester(ctx));
      return create(ShutdownResponseSchema);
    },

    async generateClientConfiguration(req) {
      const role = roleFromProto(req.role);
      if (req.name.trim() === "") throw invalid("GenerateClientConfiguration needs a name");
      const lifetimeMs = req.lifetime ? durationMs(req.lifetime) : undefined;
      if (lifetimeMs !== undefined && lifetimeMs <= 0) {
        throw invalid(`Lifetime must be positive, got ${lifetimeMs} ms`);
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
 * @throws ConnectError InvalidArgument listing the known types.
 */
export function requireType(name: string): ResourceType {
  const type = resolveResourceType(name);
  if (type) return type;
  throw invalid(
    `Unknown resource type "${name}"; known types: ${RESOURCE_TYPES.join(", ")}`,
  );
}

function namespaceFilter(type: ResourceType, namespace: string): string | undefined {
  if (namespace === ALL_NAMESPACES) return undefined;
  return namespace || RESOURCE_DESCRIPTORS[type].namespace;
}

function requester(ctx: HandlerContext): { name: string; role: string } {
  const caller: CallerIdentity | undefined = ctx.values.get(callerKey);
  return { name: caller?.name ?? "", role: caller?.role ?? "" };
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

export { MachineService };
