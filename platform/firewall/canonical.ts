/**
 * The canonical form of `nft -j list table`: the objects of the table without the metainfo
 * and without handles (which change on every replace), in nft's order, keys sorted. Two
 * listings of the same rules give the same text; a rule added, changed or removed changes it.
 * @module
 */

/** Largest `nft -j list table` output read; a table of 256 rules lists in well under 1 MiB. */
export const MAX_LISTING_BYTES = 4 * 1024 * 1024;

/**
 * The canonical text of a JSON listing.
 * @throws SyntaxError when it is not JSON; TypeError when it has no `nftables` array.
 */
export function canonicalListing(json: string): string {
  const doc = JSON.parse(json) as { nftables?: unknown };
  if (!Array.isArray(doc.nftables)) throw new TypeError("nft -j output has no nftables array");
  const objects = doc.nftables.filter((o) =>
    typeof o === "object" && o !== null && !("metainfo" in o)
  );
  return JSON.stringify(objects.map(strip));
}

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (typeof v !== "object" || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    if (k !== "handle") out[k] = strip((v as Record<string, unknown>)[k]);
  }
  return out;
}
