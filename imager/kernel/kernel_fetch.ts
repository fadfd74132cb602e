/**
 * Gets the pinned Debian kernel package into a cache directory and unpacks
 * it there, with the ordinary Debian tools (`apt-get download`, `dpkg-deb
 * -x`) and no root. A second call with the same pin reuses the cache. A
 * foreign architecture's kernel comes through its private apt
 * (../arch/private_apt.ts).
 */
import type { KernelPin } from "../versions.ts";
import { run } from "../run.ts";

/** An unpacked kernel: its EFI-stub image and its modules directory. */
export interface FetchedKernel {
  pin: KernelPin;
  vmlinuz: string;
  modulesDir: string;
}

/**
 * Download (if not cached) and unpack `pin` under `cacheDir`.
 * @throws CommandError when apt-get or dpkg-deb fails (e.g. the version is no
 *   longer in the archive: update the pin in imager/versions.ts).
 */
export async function fetchKernel(
  pin: KernelPin,
  cacheDir: string,
  foreign?: { download: (pkg: string, version: string, outDir: string) => Promise<string> },
): Promise<FetchedKernel> {
  const root = `${cacheDir}/${pin.package}_${pin.version}`;
  const out: FetchedKernel = {
    pin,
    vmlinuz: `${root}/boot/vmlinuz-${pin.release}`,
    modulesDir: `${root}/lib/modules/${pin.release}`,
  };
  if (await exists(`${root}/.complete`)) return out;
  await Deno.mkdir(cacheDir, { recursive: true });
  // Two builds at once (CI's two QEMU lanes) would download and unpack into the same place.
  using lock = await Deno.open(`${cacheDir}/.${pin.package}.lock`, { create: true, write: true });
  await lock.lock(true);
  if (await exists(`${root}/.complete`)) return out; // the other build unpacked it meanwhile
  const file = `${pin.package}_${pin.version.replaceAll(":", "%3a")}_amd64.deb`;
  const deb = foreign
    ? await foreign.download(pin.package, pin.version, cacheDir)
    : `${cacheDir}/${file}`;
  if (!(await exists(deb))) {
    // apt's own archive may hold it already (apt-get install left it there).
    if (await exists(`/var/cache/apt/archives/${file}`)) {
      await Deno.copyFile(`/var/cache/apt/archives/${file}`, deb);
    } else {
      await run("apt-get", ["download", `${pin.package}=${pin.version}`], { cwd: cacheDir });
    }
  }
  await Deno.remove(root, { recursive: true }).catch(() => {});
  await run("dpkg-deb", ["-x", deb, root]);
  await gunzipIfCompressed(out.vmlinuz);
  await Deno.writeTextFile(`${root}/.complete`, `${pin.package}=${pin.version}\n`);
  return out;
}

/**
 * Debian's arm64 vmlinuz is a gzip-compressed Image, which GRUB unpacks but
 * systemd-boot does not; the Image itself is an EFI (PE) program. Unpacked
 * in place, so the ESP gets a kernel the firmware can start. amd64's bzImage
 * is left alone.
 */
async function gunzipIfCompressed(path: string): Promise<void> {
  const head = new Uint8Array(2);
  const f = await Deno.open(path);
  try {
    await f.read(head);
  } finally {
    f.close();
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) return;
  const plain = new Response(
    (await Deno.open(path)).readable.pipeThrough(new DecompressionStream("gzip")),
  );
  await Deno.writeFile(`${path}.tmp`, new Uint8Array(await plain.arrayBuffer()));
  await Deno.rename(`${path}.tmp`, path);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}
