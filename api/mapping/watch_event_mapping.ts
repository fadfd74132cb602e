/** Store watch events ⇄ the API's `WatchResponse` oneof. */
import { create } from "@bufbuild/protobuf";
import { type WatchResponse, WatchResponseSchema } from "../gen/machined/v1/machine_pb.ts";
import type { WatchEvent } from "../../runtime/mod.ts";
import { assertNever, type MachineResource } from "../../resources/mod.ts";
import { type AnyMachineResource, fromProtoResource, toProtoResource } from "./resource_mapping.ts";
import { ResourceMappingError } from "./mapping_error.ts";

/** Store event → API message (server side). */
export function watchEventToProto(event: WatchEvent<AnyMachineResource>): WatchResponse {
  switch (event.kind) {
    case "created":
      return create(WatchResponseSchema, {
        event: { case: "created", value: toProtoResource(event.resource) },
      });
    case "updated":
      return create(WatchResponseSchema, {
        event: {
          case: "updated",
          value: { resource: toProtoResource(event.resource), old: toProtoResource(event.old) },
        },
      });
    case "destroyed":
      return create(WatchResponseSchema, {
        event: { case: "destroyed", value: toProtoResource(event.resource) },
      });
    case "bootstrapped":
      return create(WatchResponseSchema, { event: { case: "bootstrapped", value: {} } });
    case "overflow":
      return create(WatchResponseSchema, {
        event: { case: "overflow", value: { dropped: BigInt(event.dropped) } },
      });
    default:
      return assertNever(event, "watch event");
  }
}

/**
 * API message → store event (client side).
 * @throws ResourceMappingError when the event or a resource is missing.
 */
export function watchEventFromProto(message: WatchResponse): WatchEvent<MachineResource> {
  const e = message.event;
  switch (e.case) {
    case "created":
      return { kind: "created", resource: fromProtoResource(e.value) };
    case "updated": {
      if (!e.value.resource || !e.value.old) {
        throw new ResourceMappingError(
          "updated",
          "Update event lacks the resource or its old value",
        );
      }
      return {
        kind: "updated",
        resource: fromProtoResource(e.value.resource),
        old: fromProtoResource(e.value.old),
      };
    }
    case "destroyed":
      return { kind: "destroyed", resource: fromProtoResource(e.value) };
    case "bootstrapped":
      return { kind: "bootstrapped" };
    case "overflow":
      return { kind: "overflow", dropped: Number(e.value.dropped) };
    case undefined:
      throw new ResourceMappingError("event", "Watch response carries no event");
    default:
      return assertNever(e, "watch event");
  }
}
