/**
 * UdpNtpTransport: one UDP socket per exchange (node:dgram, which Deno runs
 * without unstable flags), bound to an ephemeral port, closed when the reply,
 * the timeout or an abort arrives. Replies from other peers are ignored, so a
 * stray or spoofed datagram cannot end the wait.
 * @module
 */
import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import type { NtpExchangeOptions, NtpTransport } from "./ntp_transport.ts";

/** The real transport. */
export class UdpNtpTransport implements NtpTransport {
  exchange(
    address: string,
    port: number,
    request: Uint8Array,
    options: NtpExchangeOptions,
  ): Promise<Uint8Array | null> {
    const { timeoutMs, signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const socket = dgram.createSocket(isIPv6(address) ? "udp6" : "udp4");
      let done = false;
      const finish = (fn: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        socket.removeAllListeners("message");
        socket.close(fn);
      };
      const onAbort = () => finish(() => reject(signal!.reason));
      const timer = setTimeout(() => finish(() => resolve(null)), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      socket.on("error", (e: Error) => finish(() => reject(e)));
      socket.on("message", (msg: Uint8Array, from: { address: string; port: number }) => {
        if (from.port !== port || !sameAddress(from.address, address)) return;
        const reply = new Uint8Array(msg);
        finish(() => resolve(reply));
      });
      socket.send(request, port, address, (e: Error | null) => {
        if (e) finish(() => reject(e));
      });
    });
  }
}

/** Compares peers, treating `::ffff:a.b.c.d` as `a.b.c.d`. */
function sameAddress(a: string, b: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/^::ffff:/, "");
  return norm(a) === norm(b);
}
