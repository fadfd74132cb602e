import assert from "node:assert/strict";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

async function run(...argv: string[]) {
  const io = bufferIo();
  const code = await runMachinectl(argv, io);
  return { code, err: io.stderr.join("\n") };
}

Deno.test("--insecure takes exactly one endpoint, --fingerprint only with it and only well-formed", async () => {
  let r = await run("version", "--insecure");
  assert.deepEqual([r.code, /exactly one endpoint/.test(r.err)], [2, true]);
  r = await run("version", "--insecure", "-e", "a", "-e", "b");
  assert.deepEqual([r.code, /exactly one endpoint/.test(r.err)], [2, true]);
  r = await run("version", "--fingerprint", "SHA256:" + "a".repeat(64), "-e", "127.0.0.1:1");
  assert.deepEqual([r.code, /only goes with --insecure/.test(r.err)], [2, true]);
  r = await run("version", "--insecure", "-e", "127.0.0.1:1", "--fingerprint", "SHA256:xyz");
  assert.deepEqual([r.code, /is not a SHA-256 fingerprint/.test(r.err)], [2, true]);
  r = await run("version", "--insecure", "-n", "a,b");
  assert.deepEqual([r.code, /-n does not go with --insecure/.test(r.err)], [2, true]);
});
