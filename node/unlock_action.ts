/**
 * The UnlockVolume action: the API's request handed to the block domain's
 * {@link VolumeUnlocker}, and its refusal turned into the API's
 * {@link UnlockRefusedError} (same codes), so neither side imports the other.
 * @module
 */
import { type ActionRequester, type NodeActions, UnlockRefusedError } from "../api/server/mod.ts";
import { type VolumeUnlocker, VolumeUnlockError } from "../controllers/block/mod.ts";
import type { EventBus } from "../events/mod.ts";

/** `unlocker` behind NodeActions.unlockVolume; each try is an event (never the passphrase). */
export function unlockAction(
  unlocker: VolumeUnlocker,
  events?: EventBus,
): NonNullable<NodeActions["unlockVolume"]> {
  return async (request, by: ActionRequester) => {
    try {
      const r = await unlocker.unlock(request.volume, request.passphrase);
      events?.emit("task", `volume ${r.volume}`, "unlock-accepted", `by ${by.name} (${by.role})`);
      return r;
    } catch (e) {
      if (!(e instanceof VolumeUnlockError)) throw e;
      const why = `by ${by.name} (${by.role}): ${e.message}`;
      events?.emit("task", `volume ${request.volume}`, "unlock-refused", why);
      throw new UnlockRefusedError(e.code, e.message);
    }
  };
}
