// Root: attaching loop devices (losetup) is what makes the kernel send block uevents.
import { NativeUeventBackend } from "./backend_native.ts";
import { ueventBackendConformance } from "./backend_conformance.ts";

const isRoot = Deno.uid() === 0;

async function losetup(...args: string[]): Promise<string> {
  const out = await new Deno.Command("losetup", { args, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`losetup ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

ueventBackendConformance("native uevents (needs root for losetup)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "uevent-" });
  const file = `${dir}/disk.img`;
  await Deno.writeFile(file, new Uint8Array(1024 * 1024));
  const attached: string[] = [];
  return {
    backend: new NativeUeventBackend(),
    async trigger() {
      const dev = await losetup("-f", "--show", file);
      attached.push(dev);
      return `/devices/virtual/block/${dev.slice("/dev/".length)}`;
    },
    async flood(n) {
      // Each attach and detach sends at least one change uevent.
      for (let i = 0; i < Math.ceil(n / 2); i++) {
        const dev = await losetup("-f", "--show", file);
        await losetup("-d", dev);
      }
    },
    async cleanup() {
      for (const dev of attached) await losetup("-d", dev).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    },
  };
}, { ignore: !isRoot });
