/**
 * The native mount backend against the kernel, in a private mount namespace:
 * the outer test re-runs this file under `unshare --mount --propagation
 * private`, and the inner run refuses to mount anything unless its mount
 * namespace differs from the host's. Needs root; ignored otherwise.
 */
import assert from "node:assert/strict";
import { assertNotHostNamespace, insideTestNamespace, rerunInNamespace } from "../testing.ts";
import { NativeMountBackend } from "./backend_native.ts";
import { mountBackendConformance } from "./backend_conformance.ts";

const isRoot = Deno.uid() === 0;

if (!insideTestNamespace("mount")) {
  if (!isRoot) console.log("skipping native mount tests: mounting needs root");
  Deno.test({
    name: "NativeMountBackend conformance in a private mount namespace (needs root)",
    ignore: !isRoot,
    fn: async () => {
      const r = await rerunInNamespace(
        "mount",
        ["--mount", "--propagation", "private"],
        import.meta.url,
      );
      console.log(r.output.split("\n").filter((l) => / \.\.\. |passed/.test(l)).join("\n"));
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /\| 7 passed \| 0 failed \(/, "all ran: none failed or ignored");
    },
  });
} else {
  assertNotHostNamespace("mnt");
  mountBackendConformance("NativeMountBackend", async () => {
    const root = await Deno.makeTempDir({ prefix: "machined-mount-" });
    const open: Deno.FsFile[] = [];
    return {
      backend: new NativeMountBackend(),
      root,
      mkdir: (p) => Deno.mkdir(p),
      makeBusy: async (p) => {
        const file = await Deno.open(`${p}/held-open`, { create: true, write: true });
        open.push(file);
        return () => {
          file.close();
          open.splice(open.indexOf(file), 1);
        };
      },
      teardown: async () => {
        for (const f of open) f.close();
        await Deno.remove(root, { recursive: true });
      },
    };
  });

  Deno.test("NativeMountBackend: a recursive bind carries submounts", async () => {
    const backend = new NativeMountBackend();
    const root = await Deno.makeTempDir({ prefix: "machined-mount-" });
    try {
      await Deno.mkdir(`${root}/a/inner`, { recursive: true });
      await Deno.mkdir(`${root}/b`);
      await backend.mount({ source: "outer", target: `${root}/a`, fstype: "tmpfs" });
      await Deno.mkdir(`${root}/a/inner`);
      await backend.mount({ source: "inner", target: `${root}/a/inner`, fstype: "tmpfs" });
      await backend.bind(`${root}/a`, `${root}/b`, { recursive: true });
      const table = await backend.mounts();
      assert.ok(table.some((m) => m.mountPoint === `${root}/b/inner` && m.source === "inner"));
      await backend.unmount(`${root}/b`, { detach: true });
      await backend.unmount(`${root}/a/inner`);
      await backend.unmount(`${root}/a`);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
