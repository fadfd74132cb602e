/**
 * The native clock backend, read-only: clocks and adjtimex are read, never
 * set, so the host's time is left alone. Run with the root tests because it
 * exercises the same addon; reading needs no privilege.
 */
import { NativeClockBackend } from "./backend_native.ts";
import { clockBackendConformance } from "./backend_conformance.ts";

clockBackendConformance("NativeClockBackend", () => new NativeClockBackend(), { mutates: false });
