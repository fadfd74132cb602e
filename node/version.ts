/** machined's version, reported by the Version RPC and `machinectl version`; kept equal to deno.json's. */
export const MACHINED_VERSION = "0.1.0";
