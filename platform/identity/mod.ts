/**
 * Node identity: hostname and domain name. {@link NativeIdentityBackend} sets
 * the kernel's; {@link FakeIdentityBackend} keeps them in memory.
 *
 * @example
 * ```ts
 * import { NativeIdentityBackend } from "./platform/identity/mod.ts";
 * const identity = new NativeIdentityBackend();
 * if ((await identity.hostname()) !== "node-1") await identity.setHostname("node-1");
 * ```
 * @module
 */
export { type IdentityBackend, MAX_UTS_NAME } from "./backend.ts";
export { NativeIdentityBackend } from "./backend_native.ts";
export { FakeIdentityBackend } from "./backend_fake.ts";
export { identityBackendConformance } from "./backend_conformance.ts";
export { type BootIdSource, FakeBootIdSource, PROC_BOOT_ID, ProcBootIdSource } from "./boot_id.ts";
