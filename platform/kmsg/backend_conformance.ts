/**
 * One suite both kernel log backends pass: the fake always, the native one as
 * root. Each fixture can make the kernel log a line (natively, by writing to
 * /dev/kmsg), so following is checked end to end.
 * @module
 */
import assert from "node:assert/strict";
import type { KmsgBackend } from "./backend.ts";
import type { KmsgRecord } from "./record.ts";

/** A backend and a way to put a line into its log. */
export interface KmsgFixture {
  backend: KmsgBackend;
  log(text: string): Promise<void>;
}

/** Register the suite's tests under `name`. */
export function kmsgBackendConformance(
  name: string,
  make: () => Promise<KmsgFixture>,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (f: KmsgFixture) => Promise<void>) =>
    Deno.test({
      name: `${name}: ${title}`,
      ignore: options.ignore,
      fn: async () => fn(await make()),
    });

  test("a read without follow ends after the buffered records, in sequence order", async (f) => {
    const marker = `machined-kmsg-test-${crypto.randomUUID()}`;
    await f.log(marker);
    const records: KmsgRecord[] = [];
    for await (const r of f.backend.read()) if (!("lost" in r)) records.push(r);
    assert.ok(records.length >= 1);
    for (let i = 1; i < records.length; i++) assert.ok(records[i].seq > records[i - 1].seq);
    const mine = records.find((r) => r.text.includes(marker));
    assert.ok(mine, "the logged line was not read back");
    assert.ok(mine.level >= 0 && mine.level <= 7);
  });

  test("follow delivers new records and ends when aborted", async (f) => {
    const marker = `machined-kmsg-follow-${crypto.randomUUID()}`;
    const abort = new AbortController();
    const timeout = setTimeout(() => abort.abort(), 5000);
    let seen = false;
    let logged = false;
    try {
      for await (const r of f.backend.read({ follow: true, signal: abort.signal })) {
        if (!logged) {
          logged = true;
          await f.log(marker);
        }
        if (!("lost" in r) && r.text.includes(marker)) {
          seen = true;
          abort.abort();
        }
      }
    } finally {
      clearTimeout(timeout);
    }
    assert.ok(seen, "the followed line did not arrive");
  });
}
