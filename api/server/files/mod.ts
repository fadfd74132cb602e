/** Files on the node over the API: FileList, FileRead, DiskUsage and FileCopy, their roots by role and their bounds. */
export { createFileHandlers, type FileDeps } from "./handlers.ts";
export { createUsageHandler } from "./usage.ts";
export { createCopyHandler } from "./copy.ts";
export { allowedRoots, checkPath, PRIVILEGED_ROOTS, READER_ROOTS, REDACTED_ROOT } from "./roots.ts";
export * from "./budgets.ts";
export { redactPem, redactStateFile } from "./state_redaction.ts";
