/**
 * The two texts machined exchanges with `wg`: the configuration file
 * `wg syncconf` reads (it holds the secrets, so it is only ever written to a
 * private file) and the tab-separated `wg show <if> dump`, parsed with its
 * secret columns dropped. Pure.
 * @module
 */
import type {
  WireguardDeviceSettings,
  WireguardDeviceState,
  WireguardPeerState,
} from "./backend.ts";

/** The `wg setconf`/`syncconf` text of `s` (no wg-quick keys such as Address or MTU). */
export function configText(s: WireguardDeviceSettings): string {
  const lines = ["[Interface]", `PrivateKey = ${s.privateKey}`];
  if (s.listenPort !== undefined) lines.push(`ListenPort = ${s.listenPort}`);
  for (const p of s.peers) {
    lines.push("", "[Peer]", `PublicKey = ${p.publicKey}`);
    if (p.presharedKey !== undefined) lines.push(`PresharedKey = ${p.presharedKey}`);
    if (p.endpoint !== undefined) lines.push(`Endpoint = ${p.endpoint}`);
    if (p.allowedIps.length > 0) lines.push(`AllowedIPs = ${p.allowedIps.join(", ")}`);
    if (p.persistentKeepalive !== undefined) {
      lines.push(`PersistentKeepalive = ${p.persistentKeepalive}`);
    }
  }
  return lines.join("\n") + "\n";
}

/**
 * Parse `wg show <if> dump`: a first line `private-key public-key
 * listen-port fwmark`, then one line per peer `public-key preshared-key
 * endpoint allowed-ips latest-handshake rx tx keepalive`. The private and
 * preshared keys are read past, never kept.
 * @throws TypeError when the text is not a dump (the message quotes no field).
 */
export function parseDump(text: string): WireguardDeviceState {
  const lines = text.split("\n").filter((l) => l.length > 0);
  if (lines.length === 0) throw new TypeError("empty wg dump");
  const head = lines[0].split("\t");
  if (head.length !== 4) throw new TypeError(`wg dump: interface line has ${head.length} fields`);
  const peers = lines.slice(1).map((l, i): WireguardPeerState => {
    const f = l.split("\t");
    if (f.length !== 8) throw new TypeError(`wg dump: peer line ${i + 1} has ${f.length} fields`);
    const [publicKey, _psk, endpoint, allowed, handshake, rx, tx, keepalive] = f;
    return {
      publicKey,
      ...(endpoint === "(none)" ? {} : { endpoint }),
      allowedIps: allowed === "(none)" ? [] : allowed.split(","),
      lastHandshake: num(handshake),
      rxBytes: num(rx),
      txBytes: num(tx),
      ...(keepalive === "off" ? {} : { persistentKeepalive: num(keepalive) }),
    };
  });
  return {
    publicKey: head[1] === "(none)" ? "" : head[1],
    listenPort: num(head[2]),
    peers,
  };
}

function num(s: string): number {
  const n = Number(s);
  if (!/^[0-9]+$/.test(s) || !Number.isSafeInteger(n)) {
    throw new TypeError("wg dump: a number field is not a number");
  }
  return n;
}
