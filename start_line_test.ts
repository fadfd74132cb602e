import assert from "node:assert/strict";
import { printStartLine, startLine } from "./start_line.ts";

Deno.test("start_line.ts: the line's shape, and nothing printed outside PID 1", () => {
  assert.equal(startLine("start", "5.83"), "machined: start uptime_s=5.83");
  assert.equal(startLine("main", "6.91"), "machined: main uptime_s=6.91");
  assert.notEqual(Deno.pid, 1);
  assert.equal(printStartLine("start"), undefined);
});

/**
 * esbuild (deno bundle, as the imager bundles main.ts) hoists each ES module's
 * top-level code in evaluation order and wraps CommonJS modules in lazy
 * `__commonJS` factories; the first module whose code runs must be start_line.ts.
 */
Deno.test("start_line.ts: the first module main.ts's bundle evaluates, and it never names WebAssembly", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/main.js`;
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform", "deno", "-o", out, "main.ts"],
      cwd: new URL(".", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    const text = await Deno.readTextFile(out);
    // machined runs under --lite-mode, so --jitless: V8 has no WebAssembly there
    // (docs/decisions.md, "V8 lite mode for machined"; layout/v8_flags_test.ts).
    assert.doesNotMatch(text, /WebAssembly/, "the program reaches for WebAssembly");
    const lines = text.split("\n");
    const eager = lines.findIndex((l, i) =>
      /^\/\/ \S+$/.test(l) && !/^var require_\w+ = __commonJS\(/.test(lines[i + 1] ?? "")
    );
    assert.equal(lines[eager], "// start_line.ts");
    const call = lines.indexOf('printStartLine("start");');
    assert.ok(call > eager && lines.slice(eager + 1, call).every((l) => !/^\/\/ \S+$/.test(l)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
