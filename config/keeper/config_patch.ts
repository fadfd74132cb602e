/**
 * A request's config patches over the config in force, as the node applies
 * them: to the document as written (not the parsed config, whose defaults and
 * units, `30s` read as 30000, would not validate again), secrets included,
 * which no client sees. The result is the text in force edited in place
 * (comments kept) when that is exact, else a fresh YAML rendering
 * (config/patch/render_patched.ts).
 *
 * @module
 */
import {
  applyPatches,
  configSha256,
  type JsonValue,
  type MachineConfig,
  parseMachineConfig,
  parsePatches,
  type PatchText,
  renderPatched,
} from "../mod.ts";
import { ApplyRefusedError, ConfigBaseChangedError } from "../../api/server/mod.ts";

/**
 * Refuses a change based on another config than the one in force.
 * @throws ConfigBaseChangedError when `expected` is given and is not `inForce`'s hash
 */
export function checkBase(expected: string | undefined, inForce: MachineConfig | undefined): void {
  if (!expected) return;
  const actual = inForce === undefined ? "" : configSha256(inForce);
  if (actual !== expected.toLowerCase()) throw new ConfigBaseChangedError(expected, actual);
}

/**
 * The text of `inForce` (the config text in force) with `patches` applied.
 * @throws PatchError when a patch is malformed, out of bounds or cannot apply
 * @throws ApplyRefusedError when no config is in force
 */
export function patchConfigText(
  inForce: string | undefined,
  patches: readonly PatchText[],
): string {
  const parsed = parsePatches(patches);
  const base = inForce === undefined ? undefined : parseMachineConfig(inForce, "in force");
  if (!base?.ok) {
    throw new ApplyRefusedError(
      "Cannot patch the config: no config is in force; apply a whole config instead",
    );
  }
  const before = base.document as JsonValue;
  return renderPatched(inForce!, before, applyPatches(before, parsed)).text;
}
