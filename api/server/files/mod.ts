/** Files on the node over the API: FileList and FileRead, their roots by role and their bounds. */
export { createFileHandlers, type FileDeps } from "./handlers.ts";
export { allowedRoots, checkPath, PRIVILEGED_ROOTS, READER_ROOTS, REDACTED_ROOT } from "./roots.ts";
export * from "./budgets.ts";
export { redactPem, redactStateFile } from "./state_redaction.ts";
