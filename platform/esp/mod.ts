/**
 * The EFI System Partition backend for upgrades: a small file API, mounted
 * read-only or (only while writing) read-write; real and fake.
 * @module
 */
export type { EspBackend, EspFiles, FileContent } from "./backend.ts";
export { bytesContent, EspSizeMismatch, textContent } from "./backend.ts";
export { ESP_MOUNT_POINT, NativeEspBackend } from "./backend_native.ts";
export { DirEspFiles, PREALLOCATE_STEP_BYTES, preallocationSteps } from "./dir_files.ts";
export { type EspOp, FAKE_ESP_HOST_ROOT, FakeEspBackend, PowerCut } from "./backend_fake.ts";
export { espBackendConformance } from "./backend_conformance.ts";
