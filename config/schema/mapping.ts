/**
 * Mapping schemas that reject YAML sequences. valibot's object and record
 * schemas accept arrays (they are objects to JavaScript), which would turn
 * `machine: [a]` into an "unknown key 0" error; these report
 * "expected a mapping, got a list" instead.
 *
 * @module
 */
import * as v from "valibot";

type Run = (
  dataset: v.UnknownDataset,
  config: v.Config<v.BaseIssue<unknown>>,
) => v.OutputDataset<unknown, v.BaseIssue<unknown>>;

function rejectArrays<S extends { "~run": unknown }>(schema: S): S {
  const original = schema["~run"] as Run;
  const guarded: Run = function (this: S, dataset, config) {
    if (Array.isArray(dataset.value)) {
      // deno-lint-ignore no-explicit-any
      v._addIssue(this as any, "type", dataset, config);
      return dataset as unknown as v.OutputDataset<unknown, v.BaseIssue<unknown>>;
    }
    return original.call(this, dataset, config);
  };
  (schema as { "~run": unknown })["~run"] = guarded;
  return schema;
}

/** A strict mapping with fixed keys: unknown keys and sequences are errors. */
export function mapping<const E extends v.ObjectEntries>(entries: E) {
  return rejectArrays(v.strictObject(entries, "expected a mapping"));
}

/** A mapping with free keys checked by `key` and values by `value`. */
export function mapOf<
  const K extends v.BaseSchema<string, string | number | symbol, v.BaseIssue<unknown>>,
  const V extends v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>,
>(key: K, value: V, message: string) {
  return rejectArrays(v.record(key, value, message));
}
