import assert from "node:assert/strict";
import { ukiPcr11 } from "./pcr_signature.ts";

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const text = (s: string) => new TextEncoder().encode(s);

Deno.test("ukiPcr11 extends each section's name with a NUL, its bytes, then each phase word", async () => {
  const sha = async (b: Uint8Array) =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", b.slice()));
  const ext = async (pcr: Uint8Array, d: Uint8Array) => await sha(new Uint8Array([...pcr, ...d]));
  let want: Uint8Array = new Uint8Array(32);
  want = await ext(want, await sha(text(".linux\0")));
  want = await ext(want, await sha(text("K")));
  want = await ext(want, await sha(text(".osrel\0")));
  want = await ext(want, await sha(text("O")));
  want = await ext(want, await sha(text("enter-initrd")));
  // .uname and .pcrsig are not measured; the order is the stub's, not the map's.
  const got = await ukiPcr11(
    new Map([[".osrel", text("O")], [".pcrsig", text("{}")], [".uname", text("u")], [
      ".linux",
      text("K"),
    ]]),
    ["enter-initrd"],
  );
  assert.equal(hex(got), hex(want));
});
