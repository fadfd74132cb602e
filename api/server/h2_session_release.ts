/**
 * Works around a leak in Deno 2.9.3's node:http2 server: every session it
 * ever served stays reachable after it closed, with its socket. The native
 * session handle is held by a V8 global handle that is never released, and
 * the handle's JavaScript properties (the `sendPending` wrapper installed in
 * `setupHandle`, its owner) close over the session's socket: for machined's
 * internal server, the UnixStream and its 64 KiB read buffer. machined-edge
 * opens one connection to machined per client connection, so every
 * `machinectl` call and every Prometheus scrape left about 100 KiB of
 * malloc behind (the soak's growth: docs/decisions.md, "machined's leak per
 * API connection"). Once a session has closed, this empties its native
 * handle's own JavaScript properties, so that what the handle keeps is the
 * handle alone and the socket, its buffers and its streams can be collected.
 *
 * It finds the handle by the `kHandle` symbol's description, which is
 * Deno's private detail: when a Deno release renames it, nothing is cut and
 * the leak test (h2_session_release_test.ts) fails, saying so.
 */
import type { Http2Session } from "node:http2";

/** What {@link releaseOnClose} found on a session. */
export type ReleaseOutcome = "armed" | "no-handle";

/**
 * Empties `session`'s native handle of its JavaScript properties a turn
 * after the session closes. Call it from the server's `session` event, while
 * the handle is still set (Deno clears `session[kHandle]` on close).
 */
export function releaseOnClose(session: Http2Session): ReleaseOutcome {
  const handle = nativeHandle(session);
  if (!handle) return "no-handle";
  session.once("close", () => setTimeout(() => emptyObject(handle), 0));
  return "armed";
}

/** The session's `kHandle` property, when Deno has one. */
export function nativeHandle(session: Http2Session): Record<PropertyKey, unknown> | undefined {
  const key = Object.getOwnPropertySymbols(session).find((k) => k.description === "kHandle");
  const handle = key && (session as unknown as Record<symbol, unknown>)[key];
  return typeof handle === "object" && handle !== null
    ? handle as Record<PropertyKey, unknown>
    : undefined;
}

/** Deletes every own property `o` lets go of (string and symbol keys). */
function emptyObject(o: Record<PropertyKey, unknown>): void {
  for (const key of Reflect.ownKeys(o)) {
    try {
      delete o[key];
    } catch {
      // A non-configurable property: it stays, the others go.
    }
  }
}
