/**
 * Mapping schemas that reject YAML sequences. valibot's object and record
 * schemas accept arrays (they are objects to JavaScript), which would turn
 * `machine: [a]` into an "unknown key 0" error; these report
 * "expected a mapping, got a list" instead. valibot's strict object also
 * stops at the first unknown key; {@link mapping} reports every one.
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

/** Adds an issue for every unknown key after the first, which valibot reports itself. */
function reportEveryUnknownKey<S extends { "~run": unknown; entries: v.ObjectEntries }>(
  schema: S,
): S {
  const original = schema["~run"] as Run;
  const all: Run = function (this: S, dataset, config) {
    const input = dataset.value;
    const result = original.call(this, dataset, config);
    if (typeof input !== "object" || input === null || Array.isArray(input)) return result;
    const unknown = Object.keys(input).filter((k) => !Object.hasOwn(this.entries, k));
    for (const key of unknown.slice(1)) {
      // deno-lint-ignore no-explicit-any
      v._addIssue(this as any, "key", result as unknown as v.UnknownDataset, config, {
        input: key,
        expected: "never",
        path: [{
          type: "object",
          origin: "key",
          input: input as Record<string, unknown>,
          key,
          value: (input as Record<string, unknown>)[key],
        }],
      });
    }
    return result;
  };
  (schema as { "~run": unknown })["~run"] = all;
  return schema;
}

/** A strict mapping with fixed keys: every unknown key, and a sequence, is an error. */
export function mapping<const E extends v.ObjectEntries>(entries: E) {
  return rejectArrays(reportEveryUnknownKey(v.strictObject(entries, "expected a mapping")));
}

/** A mapping with free keys checked by `key` and values by `value`. */
export function mapOf<
  const K extends v.BaseSchema<string, string | number | symbol, v.BaseIssue<unknown>>,
  const V extends v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>,
>(key: K, value: V, message: string) {
  return rejectArrays(v.record(key, value, message));
}
