/**
 * The network platform surface: the {@link NetworkBackend} interface with its
 * rtnetlink implementation and its stateful fake, plus pure IP helpers.
 *
 * @example
 * ```ts
 * import { FakeNetworkBackend } from "./platform/network/mod.ts";
 * const net = new FakeNetworkBackend();
 * net.addLink({ name: "eth0" });
 * await net.setLinkUp("eth0", true);
 * await net.addAddress({ link: "eth0", address: "192.0.2.10", prefixLen: 24 });
 * ```
 * @module
 */
export * from "./backend.ts";
export { NativeNetworkBackend } from "./backend_native.ts";
export { FakeDhcpSocket, type FakeLinkSeed, FakeNetworkBackend } from "./backend_fake.ts";
export { canonicalIp, formatIp, type Ip, maskIp, parseIp, prefixContains } from "./ip.ts";
export { waitForEvent } from "./backend_conformance.ts";
