/**
 * Compacts a `deno bundle` output for the image: comments and whitespace
 * removed, every name kept. The node holds its program's source in V8's
 * heap for as long as it runs, so every byte of JSDoc the bundle carries is
 * memory on a 512 MiB board, and a single non-ASCII character anywhere makes
 * V8 store the whole source two bytes per character (issue 27: importing
 * main.js without running it left 15.9 MiB of heap; ASCII only, 13.5 MiB;
 * compacted, 12.3 MiB). Names stay as written
 * (`esbuild --minify` would rename them): error classes name themselves
 * from `new.target.name`, and an operator's stack trace keeps its function
 * names. docs/decisions.md, "The image's program is compacted".
 *
 * @module
 */
import { transform } from "esbuild";

/** The compacted file's size beside the original's, for the build's log. */
export interface CompactResult {
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Rewrite the ES module `file` in place without comments and whitespace.
 * Deterministic: the same input gives the same bytes (reproducible images).
 * @throws Error from esbuild when `file` is not valid JavaScript.
 */
export async function compactBundle(file: string): Promise<CompactResult> {
  const source = await Deno.readTextFile(file);
  const out = await transform(source, {
    format: "esm",
    target: "esnext",
    minifyWhitespace: true,
    legalComments: "none",
    // esbuild's default: non-ASCII characters written as escapes, so V8 can
    // hold the source as one byte per character (one "→" in a comment made
    // the whole 2.5 MB bundle a two-byte string: 2.4 MiB of heap).
    charset: "ascii",
  });
  await Deno.writeTextFile(file, out.code);
  return {
    bytesBefore: new TextEncoder().encode(source).length,
    bytesAfter: new TextEncoder().encode(out.code).length,
  };
}
