import assert from "node:assert/strict";
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { fetchBundle } from "./fetch_bundle.ts";

/** A server that accepts the connection and never answers (until aborted). */
const silent: typeof fetch = (_input, init) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener("abort", () => reject(new Error("aborted")));
  });

Deno.test("--from: no response headers within the deadline is deadline-exceeded (injected 1 ms)", async () => {
  const refused = await fetchBundle("http://bundles.example/b.bundle", silent, 1).catch((e) => e);
  assert.ok(refused instanceof UpgradeRefusedError, String(refused));
  assert.equal(refused.code, "deadline-exceeded");
  assert.match(refused.message, /no response headers within/);
});

Deno.test("--from: the announced Content-Length is passed on; abort ends a stalled body", async () => {
  let signal: AbortSignal | undefined;
  const stalling: typeof fetch = (_input, init) => {
    signal = init?.signal ?? undefined;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(12));
        signal?.addEventListener("abort", () => c.error(new Error("aborted")));
      },
    });
    return Promise.resolve(new Response(body, { headers: { "content-length": "4096" } }));
  };
  const got = await fetchBundle("https://bundles.example/b.bundle", stalling, 1000);
  assert.equal(got.size, 4096);
  const it = got.body[Symbol.asyncIterator]();
  assert.equal((await it.next()).value?.length, 12);
  const pending = it.next();
  got.abort();
  await assert.rejects(pending, /aborted/);
});

Deno.test("--from: other schemes and non-2xx answers are refused", async () => {
  await assert.rejects(
    fetchBundle("ftp://x/b"),
    (e) => (e as UpgradeRefusedError).code === "invalid-argument",
  );
  const notFound: typeof fetch = () => Promise.resolve(new Response("no", { status: 404 }));
  await assert.rejects(
    fetchBundle("http://x/b", notFound),
    (e) => (e as UpgradeRefusedError).code === "unavailable",
  );
});
