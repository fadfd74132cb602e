/**
 * The install's guards against a sender and a medium that fail in ordinary
 * ways: a size announced other than the head promises, and a full ESP, each
 * as a typed refusal (issue 28) instead of a raw error.
 */
import type { EspFiles, FileContent } from "../platform/esp/mod.ts";
import { BundleError, SlotError } from "../bundle/mod.ts";

/** A sender that announced another size than the head promises is refused before any write. */
export function checkSize(promised: number, announced: number | undefined): void {
  if (announced === undefined || announced === promised) return;
  throw new BundleError(
    announced < promised ? "truncated" : "trailing-bytes",
    `the sender announced ${announced} bytes, the manifest promises ${promised}`,
  );
}

/** fs.writeFile with ENOSPC/EDQUOT as SlotError `no-space`. */
export async function writeOrNoSpace(
  fs: EspFiles,
  path: string,
  content: FileContent,
): Promise<void> {
  try {
    await fs.writeFile(path, content);
  } catch (e) {
    if (!isNoSpace(e)) throw e;
    throw new SlotError("no-space", `the ESP is full writing ${path}: ${(e as Error).message}`);
  }
}

/** Whether `e` is ENOSPC or EDQUOT (Deno's `code`, or the OS error number in the message). */
export function isNoSpace(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return code === "ENOSPC" || code === "EDQUOT" || /\(os error (28|122)\)/.test(e.message);
}
