/**
 * Which CA the node's API serves with. A bad config must never cut the
 * operator off, so the CA is looked for in order: the valid config in force,
 * the last good config persisted on STATE, the bad config's own `machine.ca`
 * section when that section alone is valid, then the image's PKI. With none,
 * the API does not start (a CA made up on the spot is one nobody holds).
 *
 * @module
 */
import * as v from "valibot";
import { parse as parseYaml } from "yaml";
import { CaSchema } from "../../config/mod.ts";

/** A CA as PEM text, from wherever it was found. */
export interface CaPem {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Where {@link chooseCaSource} found the CA; `none` when nowhere. */
export type CaSourceKind = "config" | "state" | "badConfig" | "image" | "none";

/** What the node knows, each possibly absent. */
export interface CaCandidates {
  /** `machine.ca` of the valid config in force. */
  readonly config?: CaPem;
  /** `machine.ca` of the config last persisted on STATE (it was valid when written). */
  readonly state?: CaPem;
  /** `machine.ca` of the invalid config, when that section alone validates. */
  readonly badConfig?: CaPem;
  /** The CA the image carries (`/etc/machined/pki`). */
  readonly image?: CaPem;
}

/** The choice: the source and its CA (absent only for `none`). */
export type CaChoice =
  | { readonly source: Exclude<CaSourceKind, "none">; readonly ca: CaPem }
  | { readonly source: "none" };

/** The order in which sources are tried. */
export const CA_SOURCE_ORDER = ["config", "state", "badConfig", "image"] as const;

/** Pure: the first source that has a CA, in {@link CA_SOURCE_ORDER}. */
export function chooseCaSource(candidates: CaCandidates): CaChoice {
  for (const source of CA_SOURCE_ORDER) {
    const ca = candidates[source];
    if (ca) return { source, ca };
  }
  return { source: "none" };
}

/** Config texts longer than this are not searched for a CA section. */
export const MAX_CA_SEARCH_BYTES = 1024 * 1024;
const MAX_ALIAS_COUNT = 100;

/**
 * The `machine.ca` section of a config text that may be invalid elsewhere
 * (an unknown key, a bad value): the YAML is parsed without the schema, and
 * only `machine.ca` is validated, with the schema's own CA piece. Returns
 * undefined when the text is not YAML, has no such section, or the section is
 * itself invalid. Never throws. Whether the key fits the certificate is
 * checked later, by pki/ when it loads the CA.
 */
export function caSectionOf(text: string): CaPem | undefined {
  if (text.length > MAX_CA_SEARCH_BYTES) return undefined;
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: MAX_ALIAS_COUNT, prettyErrors: false });
  } catch {
    return undefined;
  }
  const machine = field(raw, "machine");
  const section = field(machine, "ca");
  if (section === undefined) return undefined;
  const r = v.safeParse(CaSchema, section);
  return r.success ? { certPem: r.output.crt, keyPem: r.output.key } : undefined;
}

function field(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

/** A human sentence for logs, events and MachineStatus. */
export function describeCaSource(source: CaSourceKind): string {
  switch (source) {
    case "config":
      return "the CA of the config in force";
    case "state":
      return "the CA of the last good config persisted on STATE";
    case "badConfig":
      return "the CA section of the invalid config (the rest of it is not in force)";
    case "image":
      return "the CA the image carries";
    case "none":
      return "no CA in the config, on STATE or in the image";
  }
}
