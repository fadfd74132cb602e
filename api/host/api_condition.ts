/**
 * The name of the unmet condition MachineStatus shows while the API cannot start, in a
 * file of its own so the PKI (api_pki.ts) and maintenance mode (maintenance_api.ts) share
 * it without importing each other's values.
 */
export const API_CONDITION = "api";
