/** The version machinectl reports; kept in step with deno.json's. */
export const MACHINECTL_VERSION = "0.1.0";
