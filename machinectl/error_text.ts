/**
 * Errors as machinectl prints them. A ConnectError's message is the node's
 * grpc-message: node data, which could carry a line break to forge a second
 * line on stderr (or an escape sequence). It is escaped with escapeText
 * before describeError words it, so the line machinectl prints stays one
 * line whatever the node said; the rest of the text is machinectl's own (and
 * still passes escapingIo's escapeLines on its way out).
 */
import { ConnectError } from "@connectrpc/connect";
import { escapeText } from "./terminal_text.ts";

/** `describe(e)` with the node-supplied message of a ConnectError escaped first. */
export function errorForDisplay(e: unknown, describe: (e: unknown) => string): string {
  return describe(e instanceof ConnectError ? withEscapedMessage(e) : e);
}

/** `e` with its rawMessage escaped (same code, metadata and cause). */
export function withEscapedMessage(e: ConnectError): ConnectError {
  const raw = escapeText(e.rawMessage);
  if (raw === e.rawMessage) return e;
  return new ConnectError(raw, e.code, e.metadata, undefined, e.cause);
}
