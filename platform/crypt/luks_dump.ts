/**
 * Parse `cryptsetup luksDump --dump-json-metadata` into {@link LuksInfo}.
 * The JSON is the header's own metadata area, which cryptsetup bounds
 * (at most 4 MiB); numbers arrive as strings and are checked here.
 * @module
 */
import { type LuksInfo, type LuksSlot, type LuksToken, TOKEN_PREFIX } from "./backend.ts";

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? x as Obj : {};

function int(x: unknown, what: string): number {
  const n = typeof x === "number" ? x : typeof x === "string" ? Number(x) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`LUKS2 metadata: bad ${what}`);
  return n;
}

/** @throws SyntaxError on JSON that is not JSON; TypeError on a malformed header. */
export function parseLuksDump(text: string): LuksInfo {
  const meta = obj(JSON.parse(text));
  const tokens = new Map<number, LuksToken>();
  for (const [id, raw] of Object.entries(obj(meta.tokens))) {
    const t = obj(raw);
    const keyslots = (Array.isArray(t.keyslots) ? t.keyslots : []).map((s) =>
      int(s, "token keyslot")
    );
    tokens.set(int(id, "token id"), { ...t, type: String(t.type ?? ""), keyslots });
  }
  const kindOf = new Map<number, string>();
  for (const t of tokens.values()) {
    if (!t.type.startsWith(TOKEN_PREFIX)) continue;
    for (const s of t.keyslots) kindOf.set(s, t.type.slice(TOKEN_PREFIX.length));
  }
  const slots: LuksSlot[] = Object.keys(obj(meta.keyslots))
    .map((s) => int(s, "keyslot"))
    .sort((a, b) => a - b)
    .map((slot) => (kindOf.has(slot) ? { slot, kind: kindOf.get(slot) } : { slot }));
  const segment = obj(obj(meta.segments)["0"]);
  return {
    slots,
    tokens,
    cipher: String(segment.encryption ?? ""),
    sectorSize: int(segment.sector_size ?? 512, "sector size"),
    dataOffset: int(segment.offset ?? 0, "data offset"),
  };
}
