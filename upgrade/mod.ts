/**
 * Signed A/B upgrades (docs/upgrade.md): the bundle format and its signed
 * manifest, the stream reader and verifier, the slot plans and their
 * executor over the ESP backend, and the node's upgrade service.
 * @module
 */
export { BUNDLE_MAGIC, encodeBundleHead } from "../bundle/mod.ts";
export { type BundleSink, readBundle } from "../bundle/mod.ts";
export { type BundleSpec, hashFile, writeBundle } from "../bundle/mod.ts";
export {
  bootChoice,
  bootedSlot,
  type Entry,
  entryFileName,
  parseEntryName,
  type Slot,
  type SlotState,
  slotState,
  sortEntries,
  TRIAL_TRIES,
} from "./entries.ts";
export { BundleError, type BundleRefusal, SlotError, type SlotRefusal } from "../bundle/mod.ts";
export {
  ALLOWED_ALGORITHMS,
  type Compatible,
  hostCompatible,
  type Manifest,
  signManifest,
  SLOT_FILES,
  UEFI_BOARD,
  verifyManifest,
} from "../bundle/mod.ts";
export { NodeUpgrade, type NodeUpgradeDeps } from "./node_upgrade.ts";
export { espDevice, nodeBootCmdline, nodeEsp, nodeUpgradeService } from "./node_wiring.ts";
export { EspBootCmdline, type EspBootCmdlineDeps } from "./booted_cmdline.ts";
export {
  assertOnlyOptionsLine,
  type BootedArgsDecision,
  type BootedArgsPlan,
  planBootedArgs,
} from "./booted_args_plan.ts";
export { fetchBundle } from "./fetch_bundle.ts";
export { toRefusal } from "./refusal.ts";
export {
  generateSigningKey,
  keyId,
  loadSigningKey,
  loadTrustedKey,
  type SigningKey,
  type TrustedKey,
} from "../bundle/mod.ts";
export {
  type EspListing,
  planBless,
  planInstall,
  planRollback,
  type PlanStep,
} from "./slot_plan.ts";
export {
  blessBooted,
  installBundle,
  type InstallEvent,
  readListing,
  rollbackSlot,
} from "./slot_writer.ts";
export { ENTRIES_DIR } from "./entries.ts";
export { memoryRecordStore, UpgradeBook } from "./upgrade_record.ts";
export { UpgradeStatusPublisher } from "./upgrade_status.ts";
