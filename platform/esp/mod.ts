/**
 * The EFI System Partition backend for upgrades: a small file API, mounted
 * read-only or (only while writing) read-write; real and fake.
 * @module
 */
export type { EspBackend, EspFiles } from "./backend.ts";
export { textChunks } from "./backend.ts";
export { ESP_MOUNT_POINT, NativeEspBackend } from "./backend_native.ts";
export { DirEspFiles } from "./dir_files.ts";
export { type EspOp, FAKE_ESP_HOST_ROOT, FakeEspBackend, PowerCut } from "./backend_fake.ts";
export { espBackendConformance } from "./backend_conformance.ts";
