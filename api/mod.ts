/**
 * machined's management API: protos and generated code (gen/), the mapping
 * between resources and messages (mapping/), RBAC (auth/), machined's side of
 * the service (server/), the network edge's process (edge/), the API host
 * with its PKI (host/) and the client (client/). See docs/api.md.
 *
 * @example
 * ```ts
 * import { createMachineClient } from "./api/mod.ts";
 * const { api, close } = createMachineClient({
 *   endpoint: "10.0.0.5:50000", caPem: "...", certPem: "...", keyPem: "...",
 * });
 * const { resources } = await api.list({ type: "svc" });
 * close();
 * ```
 * @module
 */
export * from "./client/mod.ts";
export * from "./mapping/mod.ts";
export * from "./auth/mod.ts";
export * from "./server/mod.ts";
export * from "./edge/mod.ts";
export { MachineService } from "./gen/machined/v1/machine_pb.ts";
