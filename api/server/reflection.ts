/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha), answered from the
 * generated file descriptors, so `grpcurl list` and `describe` work without
 * proto files. Every file answer carries its transitive dependencies
 * (google/protobuf/*.proto included), serialized as FileDescriptorProto.
 */
import { create, type DescFile, type DescMessage, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import type { ConnectRouter } from "@connectrpc/connect";
import * as v1 from "../gen/grpc/reflection/v1/reflection_pb.ts";
import * as v1alpha from "../gen/grpc/reflection/v1alpha/reflection_pb.ts";

/** The questions reflection answers, independent of the v1/v1alpha wire types. */
export interface ReflectionIndex {
  /** Full names of the services offered. */
  readonly services: readonly string[];
  /** Serialized file (with dependencies, dependencies first) declaring `symbol`. */
  fileContainingSymbol(symbol: string): Uint8Array[] | undefined;
  /** Serialized file (with dependencies) by its proto path. */
  fileByFilename(name: string): Uint8Array[] | undefined;
}

/** Builds the index over `files` (with their dependencies) offering `services`. */
export function createReflectionIndex(
  files: readonly DescFile[],
  services: readonly string[],
): ReflectionIndex {
  const bySymbol = new Map<string, DescFile>();
  const byName = new Map<string, DescFile>();
  const addMessage = (f: DescFile, m: DescMessage) => {
    bySymbol.set(m.typeName, f);
    m.nestedMessages.forEach((n) => addMessage(f, n));
    m.nestedEnums.forEach((e) => bySymbol.set(e.typeName, f));
    m.nestedExtensions.forEach((x) => bySymbol.set(x.typeName, f));
  };
  const addFile = (f: DescFile) => {
    if (byName.has(f.proto.name)) return;
    byName.set(f.proto.name, f);
    f.dependencies.forEach(addFile);
    f.messages.forEach((m) => addMessage(f, m));
    f.enums.forEach((e) => bySymbol.set(e.typeName, f));
    f.extensions.forEach((x) => bySymbol.set(x.typeName, f));
    for (const svc of f.services) {
      bySymbol.set(svc.typeName, f);
      svc.methods.forEach((m) => bySymbol.set(`${svc.typeName}.${m.name}`, f));
    }
  };
  files.forEach(addFile);
  const encoded = new Map<string, Uint8Array>();
  const encode = (f: DescFile) => {
    let bytes = encoded.get(f.proto.name);
    if (!bytes) encoded.set(f.proto.name, bytes = toBinary(FileDescriptorProtoSchema, f.proto));
    return bytes;
  };
  const withDeps = (file: DescFile): Uint8Array[] => {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.proto.name)) return;
      seen.add(f.proto.name);
      f.dependencies.forEach(visit);
      out.push(encode(f));
    };
    visit(file);
    return out;
  };
  const fileOf = (symbol: string): DescFile | undefined => {
    const name = symbol.replace(/^\./, "");
    const found = bySymbol.get(name);
    if (found) return found;
    // A field or enum value: its parent's file.
    const dot = name.lastIndexOf(".");
    return dot > 0 ? bySymbol.get(name.slice(0, dot)) : undefined;
  };
  return {
    services,
    fileContainingSymbol(symbol) {
      const f = fileOf(symbol);
      return f ? withDeps(f) : undefined;
    },
    fileByFilename(name) {
      const f = byName.get(name);
      return f ? withDeps(f) : undefined;
    },
  };
}

type Api = typeof v1 | typeof v1alpha;
type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;

function answer(api: Api, index: ReflectionIndex, req: Request) {
  const base = { validHost: req.host, originalRequest: req };
  const notFound = (what: string) => ({
    ...base,
    messageResponse: {
      case: "errorResponse" as const,
      value: { errorCode: Code.NotFound, errorMessage: `${what} not found` },
    },
  });
  const files = (list: Uint8Array[] | undefined, what: string) =>
    list
      ? {
        ...base,
        messageResponse: {
          case: "fileDescriptorResponse" as const,
          value: { fileDescriptorProto: list },
        },
      }
      : notFound(what);
  const m = req.messageRequest;
  let init;
  switch (m.case) {
    case "listServices":
      init = {
        ...base,
        messageResponse: {
          case: "listServicesResponse" as const,
          value: { service: index.services.map((name) => ({ name })) },
        },
      };
      break;
    case "fileByFilename":
      init = files(index.fileByFilename(m.value), `File "${m.value}"`);
      break;
    case "fileContainingSymbol":
      init = files(index.fileContainingSymbol(m.value), `Symbol "${m.value}"`);
      break;
    case "fileContainingExtension":
      init = notFound(`Extension ${m.value.containingType}(${m.value.extensionNumber})`);
      break;
    case "allExtensionNumbersOfType":
      init = {
        ...base,
        messageResponse: {
          case: "allExtensionNumbersResponse" as const,
          value: { baseTypeName: m.value, extensionNumber: [] },
        },
      };
      break;
    default:
      init = {
        ...base,
        messageResponse: {
          case: "errorResponse" as const,
          value: { errorCode: Code.InvalidArgument, errorMessage: "Empty reflection request" },
        },
      };
  }
  // The v1 and v1alpha messages are field-for-field identical.
  return create(
    api.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema,
    init as never,
  );
}

/** Registers both reflection services on a router. */
export function registerReflection(router: ConnectRouter, index: ReflectionIndex): void {
  for (const api of [v1, v1alpha] as const) {
    router.service(api.ServerReflection as typeof v1.ServerReflection, {
      async *serverReflectionInfo(requests) {
        for await (const req of requests) yield answer(api, index, req);
      },
    });
  }
}

/** The services reflection lists. */
export const REFLECTION_SERVICES = [
  v1.ServerReflection.typeName,
  v1alpha.ServerReflection.typeName,
] as const;

/** The reflection protos themselves, so `grpcurl describe` works on them too. */
export const REFLECTION_FILES: readonly DescFile[] = [
  v1.file_grpc_reflection_v1_reflection,
  v1alpha.file_grpc_reflection_v1alpha_reflection,
];
