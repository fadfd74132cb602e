import assert from "node:assert/strict";
import {
  initramfsCompression,
  LAYOUT,
  planRootTree,
  seedPath,
  writeInitramfs,
} from "./initramfs.ts";
import { INITRAMFS_MODULES_LIST, planBootInitramfs } from "./boot_initramfs.ts";
import { readCpio } from "../cpio.ts";
import { IMAGE_EDGE_PATH } from "../../api/edge/mod.ts";

const text = (data: Uint8Array | undefined) => new TextDecoder().decode(data);

Deno.test("on-demand modules are shipped and in modules.dep, but not loaded at boot", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/main.js`, "");
    const fs = await planRootTree({
      program: { kind: "js", file: `${dir}/main.js` },
      deno: "/usr/bin/true",
      modules: {
        modulesDir: `${dir}/modules`,
        release: "0.0-test",
        load: [
          { name: "virtio_net", path: "kernel/virtio_net.ko", deps: [] },
          { name: "bonding", path: "kernel/bonding.ko", deps: [] },
        ],
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
      "# Kernel modules to load at boot, in order (dependencies first), each with its parameters.\n" +
        "/usr/lib/modules/0.0-test/kernel/virtio_net.ko\n" +
        // bonding without a bond0 of its own: machined never takes over a link it did not make.
        "/usr/lib/modules/0.0-test/kernel/bonding.ko max_bonds=0\n",
    );
    assert.equal(
      text(file("/usr/lib/modules/0.0-test/modules.dep")?.data as Uint8Array),
      "kernel/virtio_net.ko:\nkernel/bonding.ko:\nkernel/llc.ko:\nkernel/stp.ko: kernel/llc.ko\n",
    );
    assert.equal(
      file("/usr/lib/modules/0.0-test/kernel/stp.ko")?.source,
      `${dir}/modules/kernel/stp.ko`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("machined-edge ships at the node's path with its libraries", async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-initramfs-" });
  try {
    await Deno.writeTextFile(`${root}/main.js`, "console.log('main');\n");
    const fs = await planRootTree({
      program: { kind: "js", file: `${root}/main.js` },
      deno: "/usr/bin/true",
      edge: "/usr/bin/true",
      modules: { modulesDir: root, release: "0.0-test", load: [] },
      release: {},
    });
    assert.equal(LAYOUT.edge, IMAGE_EDGE_PATH);
    const edge = fs.get(IMAGE_EDGE_PATH);
    assert.ok(edge?.type === "file", "the edge is a file");
    assert.equal(edge.mode, 0o755);
    assert.equal(edge.uid ?? 0, 0, "root owns it: the edge's user cannot replace it");
    const libc = fs.entries().find((e) => /\/libc\.so\.6$/.test(e.path));
    assert.ok(libc, "its libraries are shipped");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an lz4 initramfs is in the legacy frame format the kernel reads, and round-trips", async () => {
  const dir = await Deno.makeTempDir({ prefix: "imager-lz4-" });
  try {
    await Deno.writeTextFile(`${dir}/main.js`, "console.log('main');\n");
    const fs = await planRootTree({
      program: { kind: "js", file: `${dir}/main.js` },
      deno: "/usr/bin/true",
      modules: { modulesDir: dir, release: "0.0-test", load: [] },
      release: {},
    });
    const out = `${dir}/initramfs.img`;
    const sizes = await writeInitramfs(fs, out, { compression: "lz4", level: 9, mtime: 1 });
    const bytes = await Deno.readFile(out);
    assert.deepEqual([...bytes.subarray(0, 4)], [0x02, 0x21, 0x4c, 0x18]); // 0x184C2102 LE
    const cpio = await new Deno.Command("lz4", { args: ["-dc", out], stdout: "piped" }).output();
    assert.equal(cpio.stdout.length, sizes.cpioBytes);
    const main = readCpio(cpio.stdout).find((m) => m.path === "machined/main.js");
    assert.equal(text(main?.data), "console.log('main');\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the root tree links /etc/resolv.conf into /run and seeds it; it has no device nodes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/main.js`, "");
    const fs = await planRootTree({
      program: { kind: "js", file: `${dir}/main.js` },
      deno: "/usr/bin/true",
      modules: { modulesDir: dir, release: "0.0-test", load: [] },
      release: {},
    });
    const link = fs.entries().find((e) => e.path === "/etc/resolv.conf");
    assert.deepEqual(link, {
      type: "symlink",
      path: "/etc/resolv.conf",
      target: "/run/resolv.conf",
    });
    assert.equal(fs.get(seedPath("/run/resolv.conf"))?.type, "file");
    assert.equal(fs.entries().filter((e) => e.type === "chardev").length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the boot initramfs holds machined-init, the console and only the listed modules", async () => {
  const fs = await planBootInitramfs({
    init: "/usr/bin/true",
    modules: {
      modulesDir: "/nonexistent",
      release: "0.0-test",
      load: [{ name: "loop", path: "kernel/loop.ko", deps: [] }],
    },
  });
  assert.equal(fs.get(LAYOUT.init)?.type, "file");
  assert.equal(fs.get("/dev/console")?.type, "chardev");
  const list = fs.get(INITRAMFS_MODULES_LIST);
  assert.equal(
    list?.type === "file" && text(list.data),
    "# Modules machined-init loads to reach the root image, in order.\n" +
      "/usr/lib/modules/0.0-test/kernel/loop.ko\n",
  );
  assert.equal(fs.get("/usr/bin/deno"), undefined);
});

Deno.test("a Secure Boot build compresses its initramfs with zstd: the stub appends /.extra after it, which lz4's legacy frames would swallow", () => {
  assert.equal(initramfsCompression({ secureBoot: false }), "lz4");
  assert.equal(initramfsCompression({ secureBoot: false, compression: "zstd" }), "zstd");
  assert.equal(initramfsCompression({ secureBoot: true }), "zstd");
  assert.throws(
    () => initramfsCompression({ secureBoot: true, compression: "lz4" }),
    (e) => e instanceof TypeError && /Secure Boot image uses zstd/.test(e.message),
  );
});
