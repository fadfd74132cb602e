/**
 * ExtensionStatus: one system extension of the booted slot (`deno task image
 * --extension`), as machined-init left it: its name, version, size and
 * SHA-256 from the root image's index, and whether it was verified and
 * mounted read-only on `/opt/extensions/<name>` or refused (with the reason:
 * a hash mismatch, a read or mount error). The id is the extension's name.
 * Written only by extensions.ExtensionStatusController; docs/hardening.md.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const EXTENSION_STATUS = "ExtensionStatus";

/**
 * `mounted`: its hash matched and it is mounted; `refused`: machined-init
 * would not mount it (see `reason`); `unknown`: listed in the image but
 * machined-init left no outcome (not booted from a slot image).
 */
export type ExtensionState = "mounted" | "refused" | "unknown";

export interface ExtensionStatusSpec {
  readonly name: string;
  /** `SYSEXT_VERSION_ID` of its extension-release file. */
  readonly version: string;
  /** Lower-case hex SHA-256 the signed root image's index expects. */
  readonly sha256: string;
  /** Bytes, from the index. */
  readonly size: number;
  readonly state: ExtensionState;
  /** Where it is mounted (read-only, nosuid, nodev): a service's `command` may run from it. */
  readonly mountPoint: string;
  /** Why it was refused (or is unknown); empty when mounted. */
  readonly reason: string;
}

export const extensionStatusDescriptor: ResourceDescriptor<
  typeof EXTENSION_STATUS,
  ExtensionStatusSpec
> = {
  type: EXTENSION_STATUS,
  namespace: "runtime",
  aliases: ["extensionstatus", "extensionstatuses", "extensions", "extension", "ext"],
  description: "A system extension of the booted slot: version, hash, mounted or refused",
  columns: [
    { header: "VERSION", value: (s) => s.version },
    { header: "STATE", value: (s) => s.state },
    { header: "SHA256", value: (s) => s.sha256.slice(0, 12) },
    { header: "MOUNT", value: (s) => s.mountPoint },
    { header: "REASON", value: (s) => s.reason },
  ],
};
