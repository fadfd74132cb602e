import assert from "node:assert/strict";
import { packageLists } from "./private_apt.ts";

Deno.test("packageLists counts apt's package indexes however compressed, and nothing else", async () => {
  const dir = await Deno.makeTempDir({ prefix: "apt-lists-" });
  try {
    // What `apt-get update` left when it fetched nothing (no DNS) and exited 0 anyway.
    await Deno.mkdir(`${dir}/partial`);
    await Deno.writeTextFile(`${dir}/lock`, "");
    await Deno.writeTextFile(`${dir}/.updated`, "");
    assert.equal(await packageLists(dir), 0);
    for (
      const name of [
        "deb.debian.org_debian_dists_bookworm_main_binary-arm64_Packages.lz4",
        "deb.debian.org_debian_dists_bookworm-updates_main_binary-arm64_Packages",
        "deb.debian.org_debian_dists_bookworm_InRelease",
        "deb.debian.org_debian_dists_bookworm_main_dep11_Components-arm64.yml.gz",
      ]
    ) await Deno.writeTextFile(`${dir}/${name}`, "");
    assert.equal(await packageLists(dir), 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
