/**
 * The kernel command line is readable by every process (`/proc/cmdline`), so a
 * config given there (`machined.config.b64=`) must not carry the CA's private
 * key: such a config is refused with an error pointing at `machine.ca.key`,
 * and its CA is never used. Bake a config with a CA into the image (or STATE)
 * instead; see docs/decisions.md.
 */
import { LineCounter, parseDocument } from "yaml";
import { ConfigError } from "../mod.ts";

/** The path of the one secret a config may hold. */
export const CA_KEY_PATH = ["machine", "ca", "key"] as const;

/**
 * An error at `machine.ca.key` when `text` has one, else undefined. `where`
 * names the public place the text came from, for the message. Never throws.
 */
export function forbiddenSecretError(
  text: string,
  source: string,
  where: string,
): ConfigError | undefined {
  const lines = new LineCounter();
  let node: unknown;
  try {
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
    node = doc.getIn([...CA_KEY_PATH], true);
  } catch {
    return undefined;
  }
  if (node === undefined || node === null) return undefined;
  const range = (node as { range?: [number, number, number] }).range;
  const pos = range ? lines.linePos(range[0]) : { line: 1, col: 1 };
  return new ConfigError({
    kind: "semantic",
    source,
    segments: [...CA_KEY_PATH],
    line: pos.line,
    column: pos.col,
    message: `a config from the ${where} may not carry the CA private key: ` +
      `every process on the node can read it there; the config was refused and its CA is not used`,
    hint: "bake the config into the image (deno task image --config) or apply it over the API",
  });
}
