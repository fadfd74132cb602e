/**
 * An upgrade must not silently take away a system extension the running
 * node has (a driver or tool a service runs from): a bundle whose signed
 * manifest lacks one of the booted slot's extensions is refused unless the
 * admin forces it (`machinectl upgrade --force`, logged), as the downgrade
 * floor is. An extension whose version changes is kept, not dropped. Pure.
 * @module
 */
import type { ManifestExtension } from "../bundle/mod.ts";

/** What {@link extensionDecision} decided. */
export type ExtensionVerdict =
  | { kind: "kept" }
  | { kind: "forced"; dropped: string[]; message: string }
  | { kind: "refused"; reason: "extension-dropped"; dropped: string[]; message: string };

/**
 * Whether a bundle carrying `bundle` may replace a slot running `running`
 * (the booted root image's extension names). Pure.
 */
export function extensionDecision(o: {
  running: readonly string[];
  bundle: readonly Pick<ManifestExtension, "name">[] | undefined;
  force?: boolean;
}): ExtensionVerdict {
  const carried = new Set((o.bundle ?? []).map((e) => e.name));
  const dropped = [...new Set(o.running)].filter((n) => !carried.has(n)).sort();
  if (dropped.length === 0) return { kind: "kept" };
  const what = `the bundle drops system extension${dropped.length > 1 ? "s" : ""} ` +
    `${dropped.map((n) => `"${n}"`).join(", ")} that the running node has`;
  if (o.force) return { kind: "forced", dropped, message: `${what} (forced)` };
  return {
    kind: "refused",
    reason: "extension-dropped",
    dropped,
    message: `${what}; build the bundle with --extension or upgrade with --force`,
  };
}
