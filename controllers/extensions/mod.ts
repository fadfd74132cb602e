/**
 * The extensions domain: the booted slot's system extensions, verified and
 * mounted by machined-init before machined starts, published as
 * ExtensionStatus (`machinectl get extensions`).
 *
 * @example
 * ```ts
 * import { DiskExtensionFiles, extensionsControllers } from "./controllers/extensions/mod.ts";
 * const controllers = extensionsControllers({ files: new DiskExtensionFiles() });
 * console.log(controllers.map((c) => c.name));
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { extensionStatusController, type ExtensionStatusDeps } from "./extension_status.ts";

/** The extensions domain's controllers. */
export function extensionsControllers(deps: ExtensionStatusDeps): MachineController[] {
  return [extensionStatusController(deps)];
}

export {
  DiskExtensionFiles,
  type ExtensionFiles,
  MAX_EXTENSION_FILE_BYTES,
} from "./extension_files.ts";
export { FakeExtensionFiles } from "./extension_files_fake.ts";
export {
  ExtensionStatusController,
  extensionStatusController,
  type ExtensionStatusDeps,
  extensionStatuses,
} from "./extension_status.ts";
