/**
 * Reads the structure and documentation back out of valibot schemas: which
 * keys a mapping allows (for typo suggestions) and the description, default,
 * examples and type name of each field (for the reference docs).
 *
 * @module
 */
import type { PathSegment } from "./config_error.ts";

/** The parts of a valibot schema object this module reads. */
interface SchemaLike {
  kind: string;
  type: string;
  expects?: string;
  wrapped?: SchemaLike;
  default?: unknown;
  pipe?: readonly SchemaLike[];
  entries?: Record<string, SchemaLike>;
  item?: SchemaLike;
  value?: SchemaLike;
  options?: readonly SchemaLike[];
  description?: string;
  metadata?: { docType?: string; secret?: boolean };
  examples?: readonly unknown[];
}

/** A schema with its wrappers (optional, pipe) peeled off and their documentation gathered. */
export interface Unwrapped {
  /** The innermost schema: object, array, string... */
  base: SchemaLike;
  optional: boolean;
  /** The default filled in when the key is absent, if any. */
  default?: unknown;
  description?: string;
  /** The `docType` metadata, e.g. "duration"; the outermost wins. */
  docType?: string;
  examples: readonly unknown[];
  /** Marked `secret` (key material): never shown to readers, never quoted in errors. */
  secret: boolean;
}

/** Peels `optional` and `pipe` wrappers off a schema, collecting docs on the way. */
export function unwrap(schema: unknown): Unwrapped {
  let s = schema as SchemaLike;
  const out: Unwrapped = { base: s, optional: false, examples: [], secret: false };
  for (;;) {
    if (s.type === "optional" && s.wrapped) {
      out.optional = true;
      if (s.default !== undefined && !("default" in out)) out.default = s.default;
      s = s.wrapped;
      continue;
    }
    if (s.pipe && s.pipe.length > 0 && s.pipe[0] !== s) {
      for (const item of s.pipe.slice(1)) {
        if (item.type === "description") out.description ??= item.description;
        if (item.type === "metadata") {
          out.docType ??= item.metadata?.docType;
          if (item.metadata?.secret) out.secret = true;
        }
        if (item.type === "examples" && out.examples.length === 0) {
          out.examples = item.examples ?? [];
        }
      }
      s = s.pipe[0];
      continue;
    }
    break;
  }
  out.base = s;
  return out;
}

/** The schema of a child: a mapping entry, a list item or a record value. */
export function childSchema(schema: unknown, segment: PathSegment): SchemaLike | undefined {
  const { base } = unwrap(schema);
  if ((base.type === "strict_object" || base.type === "object") && typeof segment === "string") {
    return base.entries?.[segment];
  }
  if (base.type === "array") return base.item;
  if (base.type === "record") return base.value;
  return undefined;
}

/** The schema at a path below `root`, or `undefined` when the path leaves the schema. */
export function schemaAt(root: unknown, path: readonly PathSegment[]): SchemaLike | undefined {
  let s: SchemaLike | undefined = root as SchemaLike;
  for (const seg of path) {
    if (!s) return undefined;
    s = childSchema(s, seg);
  }
  return s;
}

/** The keys a mapping schema allows, or `undefined` when it is not a fixed mapping. */
export function allowedKeys(schema: unknown): string[] | undefined {
  if (!schema) return undefined;
  const { base } = unwrap(schema);
  return base.entries ? Object.keys(base.entries) : undefined;
}
