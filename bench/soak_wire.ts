/**
 * What the soak's clients read of each WatchResponse without decoding it
 * (bench/soak.ts): a thousand streams of MachineConfig updates decoded into
 * objects cost the client more CPU than machined and the edge together, and a
 * client that falls behind measures itself. Every byte is still read; only
 * the event's kind (its oneof field number) and the apply's sequence number
 * (the value of the soak's sysctl inside the config Struct) are picked out.
 */

/** The kind of a WatchResponse, by the field number of its `event` (api/proto). */
export type WatchKind = "created" | "updated" | "destroyed" | "bootstrapped" | "overflow" | "other";

const KINDS: Record<number, WatchKind> = {
  0x0a: "created",
  0x12: "updated",
  0x1a: "destroyed",
  0x22: "bootstrapped",
  0x2a: "overflow",
};

/** The event's kind from its first byte (field number and wire type 2). */
export function watchKind(message: Uint8Array): WatchKind {
  return KINDS[message[0]] ?? "other";
}

/**
 * The integer string value of the Struct entry `key` in an encoded message
 * (`key` as a map key, then Value{string_value}), or undefined when absent:
 * the bytes `0a <len> key 12 <len> 1a <len> digits`. The first occurrence
 * wins: an update carries the new resource before the old one.
 */
export function structIntValue(message: Uint8Array, key: string): number | undefined {
  const k = new TextEncoder().encode(key);
  outer: for (let i = 2; i + k.length + 4 < message.length; i++) {
    if (message[i - 2] !== 0x0a || message[i - 1] !== k.length) continue;
    for (let j = 0; j < k.length; j++) if (message[i + j] !== k[j]) continue outer;
    let at = i + k.length;
    if (message[at] !== 0x12) continue;
    at += 2; // Value's length (one byte for a short string)
    if (message[at] !== 0x1a) continue;
    const len = message[at + 1];
    const text = new TextDecoder().decode(message.subarray(at + 2, at + 2 + len));
    return /^\d+$/.test(text) ? Number(text) : undefined;
  }
  return undefined;
}
