/**
 * The operator's machine config file is the source of truth for a node's CA
 * (it holds `machine.ca.key`, which the API never returns), so a rotation
 * edits that text: only `machine.ca` changes, every other line, comment and
 * format stays as the operator wrote it.
 *
 * @module
 */
import { isMap, parseDocument, Scalar } from "yaml";
import { MAX_CONFIG_BYTES } from "../../config/mod.ts";

/** `machine.ca` as read from a config file (PEM text). */
export interface FileCa {
  readonly crt: string | undefined;
  readonly key: string | undefined;
  readonly accepted: readonly string[];
}

/** A config text that cannot be edited, with the file named. */
export class ConfigEditError extends Error {
  override name = "ConfigEditError";
}

function documentOf(text: string, source: string) {
  // The node refuses a larger config anyway; refuse it before parsing.
  if (text.length > MAX_CONFIG_BYTES) {
    throw new ConfigEditError(`"${source}" is larger than ${MAX_CONFIG_BYTES} bytes`);
  }
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigEditError(`Cannot parse "${source}" as YAML: ${doc.errors[0].message}`);
  }
  if (!isMap(doc.get("machine"))) {
    throw new ConfigEditError(`"${source}" has no machine: mapping`);
  }
  return doc;
}

/**
 * Pure: `machine.ca` of a config text.
 * @throws {ConfigEditError} when the text is not YAML or has no `machine` mapping
 */
export function caOfConfigText(text: string, source: string): FileCa {
  const doc = documentOf(text, source);
  const str = (path: string[]) => {
    const v = doc.getIn(path);
    return typeof v === "string" ? v : undefined;
  };
  const list = doc.getIn(["machine", "ca", "accepted"]);
  const accepted = list && typeof list === "object" && "items" in list
    ? (list as { items: unknown[] }).items.map((i) => String(i instanceof Scalar ? i.value : i))
    : [];
  return { crt: str(["machine", "ca", "crt"]), key: str(["machine", "ca", "key"]), accepted };
}

/**
 * Pure: `text` with `machine.ca` set to `ca` (PEM as literal blocks; an
 * empty `accepted` is removed), everything else untouched.
 * @throws {ConfigEditError} when the text is not YAML or has no `machine` mapping
 */
export function withCaSection(
  text: string,
  source: string,
  ca: { crt: string; key: string; accepted: readonly string[] },
): string {
  const doc = documentOf(text, source);
  const block = (pem: string) => {
    const s = new Scalar(pem.trim() + "\n");
    s.type = Scalar.BLOCK_LITERAL;
    return s;
  };
  doc.setIn(["machine", "ca", "crt"], block(ca.crt));
  doc.setIn(["machine", "ca", "key"], block(ca.key));
  if (ca.accepted.length > 0) {
    doc.setIn(["machine", "ca", "accepted"], doc.createNode(ca.accepted.map(block)));
  } else {
    doc.deleteIn(["machine", "ca", "accepted"]);
  }
  return doc.toString({ lineWidth: 0 });
}
