/** What every resource type declares about itself, for the CLI, the API and docs. */

/** One column of `machinectl get` table output. */
export interface Column<S> {
  readonly header: string;
  readonly value: (spec: S) => string;
}

/** Static facts about a resource type `K` with spec `S`. */
export interface ResourceDescriptor<K extends string, S> {
  readonly type: K;
  /** The namespace its resources live in by default. */
  readonly namespace: string;
  /** Other names `machinectl get` accepts (lower case), e.g. `svc`, `services`. */
  readonly aliases: readonly string[];
  /** One line for `machinectl get` listings and the API reference. */
  readonly description: string;
  /** Table columns after NAMESPACE, TYPE, ID, VERSION. */
  readonly columns: readonly Column<S>[];
}

/** Renders a value for a table cell: short, single line. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map(cell).join(",");
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
