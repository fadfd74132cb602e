/**
 * The shape every resource in the store has: typed metadata plus a typed spec.
 * The store itself is generic over a *catalog* (a map from type name to spec
 * type); machined closes that catalog in resources/registry.ts.
 */

/** Lifecycle phase: `tearingDown` resources wait for their finalizers before destroy. */
export type Phase = "running" | "tearingDown";

/** A catalog maps each resource type name to its spec type. */
export type Catalog = Record<string, unknown>;

/** The type names of a catalog. */
export type TypeName<M extends Catalog> = keyof M & string;

/** Metadata the store maintains for every resource. */
export interface Metadata<T extends string = string> {
  readonly namespace: string;
  readonly type: T;
  readonly id: string;
  /** Monotonic per resource: starts at 1 and grows by one with every committed change. */
  readonly version: number;
  /** The controller (or subsystem) that wrote it; only the owner may change it. */
  readonly owner: string;
  readonly phase: Phase;
  readonly finalizers: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly created: Date;
  readonly updated: Date;
}

/** A resource of type `T` with spec `S`. Resources handed out by the store are deeply frozen. */
export interface Resource<T extends string = string, S = unknown> {
  readonly metadata: Metadata<T>;
  readonly spec: S;
}

/** A resource of catalog `M` and type `K`. */
export type ResourceOf<M extends Catalog, K extends TypeName<M>> = Resource<K, M[K]>;

/** Any resource of catalog `M`: a union discriminated by `metadata.type`. */
export type AnyResourceOf<M extends Catalog> = {
  [K in TypeName<M>]: ResourceOf<M, K>;
}[TypeName<M>];

/** Addresses one resource. */
export interface Pointer<T extends string = string> {
  readonly type: T;
  readonly namespace: string;
  readonly id: string;
}

/** Renders a pointer as `namespace/type/id` for messages and map keys. */
export function pointerKey(p: Pointer): string {
  return `${p.namespace}/${p.type}/${p.id}`;
}

/**
 * A label query: every term must hold. `{ key, op: "exists" }`, `{ key, op: "equal", value }`,
 * `{ key, op: "notEqual", value }`, `{ key, op: "in", values }`.
 */
export type LabelTerm =
  | { key: string; op: "exists" }
  | { key: string; op: "notExists" }
  | { key: string; op: "equal"; value: string }
  | { key: string; op: "notEqual"; value: string }
  | { key: string; op: "in"; values: readonly string[] };

/** A conjunction of label terms; an empty selector matches everything. */
export type LabelSelector = readonly LabelTerm[];

/** True when `labels` satisfies every term of `selector`. */
export function matchLabels(
  labels: Readonly<Record<string, string>>,
  selector: LabelSelector = [],
): boolean {
  return selector.every((term) => {
    const has = Object.hasOwn(labels, term.key);
    switch (term.op) {
      case "exists":
        return has;
      case "notExists":
        return !has;
      case "equal":
        return has && labels[term.key] === term.value;
      case "notEqual":
        return !has || labels[term.key] !== term.value;
      case "in":
        return has && term.values.includes(labels[term.key]);
    }
  });
}

/**
 * Parses the text form used by the CLI: `a=b,c!=d,e,!f,g in (x|y)`.
 * @throws TypeError when a term is malformed.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const terms: LabelTerm[] = [];
  for (const raw of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    let m: RegExpExecArray | null;
    if ((m = /^([\w./-]+)\s+in\s+\(([^)]*)\)$/.exec(raw))) {
      terms.push({ key: m[1], op: "in", values: m[2].split("|").map((s) => s.trim()) });
    } else if ((m = /^([\w./-]+)\s*!=\s*(.*)$/.exec(raw))) {
      terms.push({ key: m[1], op: "notEqual", value: m[2] });
    } else if ((m = /^([\w./-]+)\s*==?\s*(.*)$/.exec(raw))) {
      terms.push({ key: m[1], op: "equal", value: m[2] });
    } else if ((m = /^!([\w./-]+)$/.exec(raw))) {
      terms.push({ key: m[1], op: "notExists" });
    } else if ((m = /^([\w./-]+)$/.exec(raw))) {
      terms.push({ key: m[1], op: "exists" });
    } else {
      throw new TypeError(`Malformed label selector term "${raw}"`);
    }
  }
  return terms;
}
