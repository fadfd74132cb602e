/** The version machinectl reports: machined's, since they ship together. */
export { MACHINED_VERSION as MACHINECTL_VERSION } from "../layout/mod.ts";
