/**
 * Two machine configs as a unified diff of their YAML, for a dry run to show
 * what an apply would change. Both sides are rendered the same way from the
 * parsed document (keys sorted, no line folding, no anchors), so comments,
 * key order and quoting in the operator's file never show as changes: the
 * diff is empty exactly when {@link configDiff} finds nothing. Callers pass
 * configs with their secrets already replaced (api/server/config_preview.ts);
 * this module renders whatever it is given.
 *
 * @module
 */
import { stringify } from "yaml";
import { type LineDiff, type LineDiffOptions, unifiedLineDiff } from "./line_diff.ts";

/** `config` as the YAML lines a diff compares; none for no config. */
export function configYamlLines(config: unknown): string[] {
  if (config === undefined) return [];
  const text = stringify(config, {
    sortMapEntries: true,
    lineWidth: 0,
    aliasDuplicateObjects: false,
  });
  return text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
}

/**
 * `before` (the config in force, or undefined when none is) against `after`
 * as a unified diff of {@link configYamlLines}, bounded as line_diff.ts says.
 */
export function configTextDiff(
  before: unknown,
  after: unknown,
  options: LineDiffOptions = {},
): LineDiff {
  return unifiedLineDiff(configYamlLines(before), configYamlLines(after), {
    names: ["in force", "requested"],
    ...options,
  });
}
