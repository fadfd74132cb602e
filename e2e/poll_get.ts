/**
 * `machinectl get <type> -o json` in a namespace, polled until a document
 * matches: how the network steps wait for the node to converge through the
 * same path an operator reads it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { machinectlInNetns, parseDocs } from "./helpers.ts";

/** One resource as `get -o json` prints it. */
export type GetDoc = { metadata: { id: string }; spec: Record<string, unknown> };

/** Where and how to dial. */
export interface GetTarget {
  ns: string;
  clientConfig: string;
  /** `<address>:50000`. */
  api: string;
}

/**
 * The first document of `type` for which `want` holds, polled every second
 * up to `ms`. @throws AssertionError with the last answer when none matched.
 */
export async function pollGet(
  c: GetTarget,
  type: string,
  want: (d: GetDoc) => boolean,
  ms: number,
): Promise<GetDoc> {
  let last = "";
  for (const end = performance.now() + ms; performance.now() < end;) {
    const r = await machinectlInNetns(c.ns, c.clientConfig, c.api, "get", type, "-o", "json");
    last = r.code === 0 ? r.out : r.err;
    const hit = r.code === 0 ? (parseDocs(r.out) as GetDoc[]).find(want) : undefined;
    if (hit) return hit;
    await new Promise((ok) => setTimeout(ok, 1000));
  }
  assert.fail(`no ${type} as wanted after ${ms} ms; last answer:\n${last}`);
}
