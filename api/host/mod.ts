/**
 * The API host on a node: the internal server and the supervised edge, the API's PKI, readiness probe and report, maintenance mode.
 * @module
 */
export * from "./api_host.ts";
export * from "./api_pki.ts";
export * from "./api_probe_client.ts";
export * from "./api_ready_report.ts";
export * from "./apid_pki.ts";
export * from "./maintenance_announce.ts";
export * from "./maintenance_gate.ts";
