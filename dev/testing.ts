/**
 * Helpers for the tests and benches that run a dev-mode node as a child
 * process (metrics/prometheus_test.ts, bench/overhead_bench.ts,
 * machinectl/dashboard/dashboard_tmux_test.ts): one copy each of reading a
 * child's output, waiting for a condition and picking a free port.
 *
 * @module
 */

/** Collects a stream's text in the background (the last 20 000 characters, for failure messages). */
export function drain(stream: ReadableStream<Uint8Array>): { text: string } {
  const out = { text: "" };
  (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      out.text = (out.text + chunk).slice(-20_000);
    }
  })().catch(() => {});
  return out;
}

/**
 * Calls `probe` every 500 ms until it gives a value (a throw counts as none).
 * @throws Error naming `what` when nothing came within `ms`.
 */
export async function waitFor<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${what}: nothing within ${ms} ms`);
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}
