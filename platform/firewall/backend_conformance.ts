/**
 * One suite both firewall backends must pass: the fake always, nft as root inside a network
 * namespace the test created (firewall_root_test.ts). Each case starts with no `inet mc_conf`
 * table; the harness removes it afterwards.
 * @module
 */
import assert from "node:assert/strict";
import { type FirewallBackend, FirewallBackendError, type TableRef } from "./backend.ts";

/** What a case receives: the backend and ways for "someone else" to change the table. */
export interface FirewallTarget {
  backend: FirewallBackend;
  /** Deletes the table without the backend (`nft delete table`). */
  deleteBehindBack(table: TableRef): Promise<void>;
  /** Adds `rule` to the table's `input` chain without the backend. */
  addBehindBack(table: TableRef, rule: string): Promise<void>;
}

/** The table the suite uses (never machined's own). */
export const CONFORMANCE_TABLE: TableRef = { family: "inet", name: "mc_conf" };

/** A replace transaction in the compiler's pattern, with `rules` in its input chain. */
export function replaceTable(table: TableRef, rules: readonly string[]): string {
  const t = `${table.family} ${table.name}`;
  return [
    `add table ${t}`,
    `delete table ${t}`,
    `table ${t} {`,
    "\tchain input {",
    "\t\ttype filter hook input priority filter; policy accept;",
    ...rules.map((r) => `\t\t${r}`),
    "\t}",
    "}",
    "",
  ].join("\n");
}

const T = CONFORMANCE_TABLE;
const A = replaceTable(T, ["tcp dport 22 accept", "udp dport 53 accept"]);
const B = replaceTable(T, ["tcp dport 22 accept"]);

/** The cases, by name; the caller registers each as a test with its own setup. */
export const FIREWALL_CONFORMANCE: Record<string, (t: FirewallTarget) => Promise<void>> = {
  "an absent table reads as undefined; removing it is a no-op": async ({ backend }) => {
    assert.equal(await backend.read(T), undefined);
    await backend.remove(T);
    assert.equal(await backend.read(T), undefined);
  },
  "the replace pattern applies on an empty ruleset and again over itself": async ({ backend }) => {
    await backend.apply(A);
    const first = await backend.read(T);
    assert.ok(first !== undefined);
    await backend.apply(A);
    assert.equal(await backend.read(T), first, "the same rules read back the same");
    await backend.apply(B);
    assert.notEqual(await backend.read(T), first);
    await backend.apply(A);
    assert.equal(await backend.read(T), first, "handles do not enter the canonical form");
  },
  "a refused transaction changes nothing and says why": async ({ backend }) => {
    await backend.apply(A);
    const before = await backend.read(T);
    const bad = replaceTable(T, ["tcp dport 22 accept", "bogus statement here"]);
    await assert.rejects(backend.apply(bad), (e: unknown) => {
      assert.ok(e instanceof FirewallBackendError, String(e));
      assert.match(e.message, /Cannot apply the nftables ruleset: nft exited with 1: .*rror/);
      return true;
    });
    assert.equal(await backend.read(T), before);
  },
  "a table deleted or changed by someone else reads differently": async (target) => {
    const { backend } = target;
    await backend.apply(A);
    const applied = await backend.read(T);
    await target.addBehindBack(T, "tcp dport 9 drop");
    const changed = await backend.read(T);
    assert.ok(changed !== undefined && changed !== applied);
    await target.deleteBehindBack(T);
    assert.equal(await backend.read(T), undefined);
    await backend.apply(A);
    assert.equal(await backend.read(T), applied);
    await backend.remove(T);
    assert.equal(await backend.read(T), undefined);
  },
};
