/**
 * gRPC reflection on machined's internal server, so it is answered behind any
 * edge (machined-edge forwards it like every other call): the index over
 * MachineService's file and the reflection protos, built once.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import { file_machined_v1_machine, MachineService } from "../gen/machined/v1/machine_pb.ts";
import {
  createReflectionIndex,
  REFLECTION_FILES,
  REFLECTION_SERVICES,
  type ReflectionIndex,
  registerReflection,
} from "./reflection.ts";

let index: ReflectionIndex | undefined;

/** Registers grpc.reflection.v1 and v1alpha on `router`. */
export function reflectionRoutes(router: ConnectRouter): void {
  index ??= createReflectionIndex(
    [file_machined_v1_machine, ...REFLECTION_FILES],
    [MachineService.typeName, ...REFLECTION_SERVICES],
  );
  registerReflection(router, index);
}
