/**
 * Clients of the machined API (used by machinectl).
 *
 * @example
 * ```ts
 * import { createMachineClient } from "./api/client/mod.ts";
 * const { api, close } = createMachineClient({
 *   endpoint: "10.0.0.5:50000", caPem: "...", certPem: "...", keyPem: "...",
 * });
 * console.log((await api.version({})).version);
 * close();
 * ```
 * @module
 */
export {
  CONNECT_TIMEOUT_MS,
  createMachineClient,
  type MachineClient,
  type MachineClientOptions,
} from "./create_machine_client.ts";
export {
  createInsecureMachineClient,
  FingerprintMismatchError,
  presentedCertificate,
} from "./insecure.ts";
export {
  promQuery,
  promValue,
  startPrometheus,
  stopPrometheus,
  writeScrapeConfig,
} from "./prometheus_scrape.ts";
export { serverCertificate, type ServerCertificateOptions } from "./server_certificate.ts";
