/**
 * WireGuard's privileged surface: a device's keys, port and peers set, and
 * read back with handshakes and traffic. {@link WgWireguardBackend} runs
 * Debian's `wg`; {@link FakeWireguardBackend} simulates devices in memory
 * with failure injection; {@link WIREGUARD_CONFORMANCE} holds both to one
 * behaviour. The link itself is created by platform/network (rtnetlink kind
 * `wireguard`).
 *
 * @example
 * ```ts
 * import { WgWireguardBackend } from "./platform/wireguard/mod.ts";
 * import { nativeProcessBackend } from "./platform/process/mod.ts";
 * const wg = new WgWireguardBackend({ process: nativeProcessBackend() });
 * console.log(await wg.show("wg0"));
 * ```
 * @module
 */
export {
  type WireguardBackend,
  type WireguardDeviceSettings,
  type WireguardDeviceState,
  WireguardError,
  type WireguardPeerSettings,
  type WireguardPeerState,
} from "./backend.ts";
export {
  WG_STATE_DIR,
  WG_TIMEOUT_MS,
  type WgOptions,
  WgWireguardBackend,
} from "./backend_native.ts";
export { FakeWireguardBackend } from "./backend_fake.ts";
export { WIREGUARD_CONFORMANCE, type WireguardTarget } from "./backend_conformance.ts";
export { configText, parseDump } from "./wg_text.ts";
export { generatePrivateKey, publicKeyOf } from "./keys.ts";
