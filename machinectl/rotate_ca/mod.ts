/**
 * CA rotation for `machinectl rotate-ca`: a pure plan of which step each node
 * needs (accept, switch, finish), the edit of the operator's machine config
 * files, the state kept between runs beside the client config, and the run
 * over a fleet that resumes where each node stands.
 *
 * @example
 * ```ts
 * import { rotateCa } from "./machinectl/rotate_ca/mod.ts";
 *
 * await rotateCa({
 *   nodes: ["10.0.0.5", "10.0.0.6"],
 *   files: ["node-1.yaml", "node-2.yaml"],
 *   configPath: "machinectl.yaml",
 *   finish: false,
 *   out: console.log,
 * });
 * ```
 * @module
 */
export { rotateCa, type RotateCaOptions, type RotationResult } from "./rotation.ts";
export {
  caSectionFor,
  mayRun,
  type NodeStand,
  type ObservedCa,
  ROTATION_STEPS,
  type RotationCas,
  type RotationStep,
  standOf,
} from "./plan.ts";
export { caOfConfigText, ConfigEditError, type FileCa, withCaSection } from "./config_edit.ts";
export {
  type PemCredentials,
  readRotationState,
  type RotationState,
  rotationStatePath,
} from "./rotation_state.ts";
