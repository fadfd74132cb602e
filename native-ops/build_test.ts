import assert from "node:assert/strict";
import { cargoPath } from "./build.ts";

Deno.test("cargo is found on PATH, else in rustup's ~/.cargo/bin (a fresh shell may lack it)", async () => {
  const home = await Deno.makeTempDir({ prefix: "cargo-home-" });
  try {
    await Deno.mkdir(`${home}/.cargo/bin`, { recursive: true });
    await Deno.writeTextFile(`${home}/.cargo/bin/cargo`, "#!/bin/sh\n", { mode: 0o755 });
    const env = (vars: Record<string, string>) => (k: string) => vars[k];
    assert.equal(cargoPath(env({ PATH: "/nonexistent", HOME: home })), `${home}/.cargo/bin/cargo`);
    assert.equal(
      cargoPath(env({ PATH: `${home}/.cargo/bin:/nonexistent`, CARGO_HOME: "/nonexistent" })),
      `${home}/.cargo/bin/cargo`,
    );
    assert.equal(cargoPath(env({ PATH: "/nonexistent" })), "cargo");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
