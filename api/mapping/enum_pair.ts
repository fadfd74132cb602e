/**
 * A two-way table between a TypeScript string union and a proto enum. The
 * table is typed over the whole union, so a new member of the union fails
 * type-checking until it has an enum value.
 */
import { ResourceMappingError } from "./mapping_error.ts";

/** Converters of one union ⇄ enum table. */
export interface EnumPair<T extends string, E extends number> {
  to(value: T): E;
  /** @throws ResourceMappingError for a value the table does not know (e.g. UNSPECIFIED). */
  from(value: E): T;
}

/** Builds the converters of `table`; `what` names the enum in errors. */
export function enumPair<T extends string, E extends number>(
  table: { readonly [K in T]: E },
  what: string,
): EnumPair<T, E> {
  const back = new Map<number, T>(Object.entries(table).map(([k, v]) => [v as number, k as T]));
  return {
    to: (v) => table[v],
    from: (v) => {
      const found = back.get(v);
      if (found === undefined) throw new ResourceMappingError(what, `Unknown ${what} ${v}`);
      return found;
    },
  };
}
