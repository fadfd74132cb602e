/**
 * The trust domain: the CA bundle the node writes from the image's system bundle and
 * `machine.trusted_roots`, published as TrustedRootsStatus. Services see it through
 * SSL_CERT_FILE and DENO_CERT (runtime.ServiceSpecController), machined's own HTTPS clients
 * through pki's trusted fetch.
 *
 * @example
 * ```ts
 * import { DiskBundleFiles, trustControllers } from "./controllers/trust/mod.ts";
 * const controllers = trustControllers({
 *   files: new DiskBundleFiles(),
 *   bundlePath: "/run/machined/trust/ca-certificates.crt",
 * });
 * console.log(controllers.map((c) => c.name));
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { trustedRootsController, type TrustedRootsDeps } from "./trusted_roots_controller.ts";

/** The trust domain's controllers. */
export function trustControllers(deps: TrustedRootsDeps): MachineController[] {
  return [trustedRootsController(deps)];
}

/** Where a node writes the bundle: /run is writable on the read-only image. */
export const NODE_TRUSTED_ROOTS_BUNDLE = "/run/machined/trust/ca-certificates.crt";

export {
  type BundleFiles,
  DiskBundleFiles,
  MAX_SYSTEM_BUNDLE_BYTES,
  SYSTEM_BUNDLE_PATH,
} from "./bundle_files.ts";
export { FakeBundleFiles } from "./bundle_files_fake.ts";
export {
  composeBundle,
  type ComposedBundle,
  TrustedRootsController,
  trustedRootsController,
  type TrustedRootsDeps,
} from "./trusted_roots_controller.ts";
