import assert from "node:assert/strict";
import { LAYOUT, planInitramfs } from "./initramfs.ts";

const text = (data: Uint8Array | undefined) => new TextDecoder().decode(data);

Deno.test("on-demand modules are shipped and in modules.dep, but not loaded at boot", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/main.js`, "");
    const fs = await planInitramfs({
      program: { kind: "js", file: `${dir}/main.js` },
      deno: "/usr/bin/true",
      init: "/usr/bin/true",
      modules: {
        modulesDir: `${dir}/modules`,
        release: "0.0-test",
        load: [{ name: "virtio_net", path: "kernel/virtio_net.ko", deps: [] }],
        onDemand: [
          { name: "llc", path: "kernel/llc.ko", deps: [] },
          { name: "stp", path: "kernel/stp.ko", deps: ["llc"] },
        ],
      },
      release: { kernel: "test" },
    });
    const file = (path: string) => {
      const e = fs.get(path);
      assert.equal(e?.type, "file", `${path} is shipped`);
      return e.type === "file" ? e : undefined;
    };
    assert.equal(
      text(file(LAYOUT.modulesList)?.data as Uint8Array),
      "# Kernel modules to load at boot, in order (dependencies first).\n" +
        "/usr/lib/modules/0.0-test/kernel/virtio_net.ko\n",
    );
    assert.equal(
      text(file("/usr/lib/modules/0.0-test/modules.dep")?.data as Uint8Array),
      "kernel/virtio_net.ko:\nkernel/llc.ko:\nkernel/stp.ko: kernel/llc.ko\n",
    );
    assert.equal(
      file("/usr/lib/modules/0.0-test/kernel/stp.ko")?.source,
      `${dir}/modules/kernel/stp.ko`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
