import { deepEqual, rejects } from "node:assert/strict";
import { FakeKmsgBackend } from "../../platform/kmsg/mod.ts";
import { readKernelLog } from "./kernel_log.ts";
import type { KernelLogGap, KernelLogRecord } from "./kernel_log.ts";
import { withTimeout } from "../testing.ts";

const text = (r: KernelLogRecord | KernelLogGap) => ("lost" in r ? "(lost)" : r.text);

async function texts(it: AsyncIterable<KernelLogRecord | KernelLogGap>): Promise<string[]> {
  const out: string[] = [];
  for await (const r of it) out.push(text(r));
  return out;
}

Deno.test("readKernelLog: all, tail, tail 0, gaps count for nothing, a leading one is dropped", async () => {
  const k = new FakeKmsgBackend();
  k.log("a");
  k.lose();
  k.log("b");
  k.log("c");
  deepEqual(await texts(readKernelLog(k)), ["a", "(lost)", "b", "c"]);
  deepEqual(await texts(readKernelLog(k, { tail: 2 })), ["b", "c"]);
  deepEqual(await texts(readKernelLog(k, { tail: 3 })), ["a", "(lost)", "b", "c"]);
  deepEqual(await texts(readKernelLog(k, { tail: 9 })), ["a", "(lost)", "b", "c"]);
  deepEqual(await texts(readKernelLog(k, { tail: 0 })), []);
  await rejects(() => texts(readKernelLog(k, { tail: -1 })), RangeError);
});

Deno.test("readKernelLog: follow after a tail sends each later record once, gaps after it too", async () => {
  const k = new FakeKmsgBackend();
  k.log("a");
  k.log("b");
  const ac = new AbortController();
  const it = readKernelLog(k, { tail: 1, follow: true, signal: ac.signal });
  const next = async () => text((await withTimeout(it.next(), 2000, "record")).value!);
  deepEqual(await next(), "b");
  k.log("c");
  k.lose();
  k.log("d");
  deepEqual([await next(), await next(), await next()], ["c", "(lost)", "d"]);
  ac.abort();
  deepEqual((await withTimeout(it.next(), 2000, "end")).done, true);
});

Deno.test("readKernelLog: follow with tail 0 on an empty log streams from the first record", async () => {
  const k = new FakeKmsgBackend();
  const ac = new AbortController();
  const it = readKernelLog(k, { tail: 0, follow: true, signal: ac.signal });
  const first = it.next();
  k.log("first");
  deepEqual(text((await withTimeout(first, 2000, "record")).value!), "first");
  ac.abort();
  await it.return(undefined);
});

Deno.test("readKernelLog: a failing open is passed on", async () => {
  const k = new FakeKmsgBackend();
  k.faults.failNext("open", "EPERM");
  await rejects(() => texts(readKernelLog(k, { tail: 5 })), /EPERM/);
});
