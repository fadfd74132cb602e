/**
 * What both power backends agree on without any risk to the machine: sync
 * works. Every reboot(2) command, kexec included (a staged image would boot),
 * is tested natively only inside a throwaway PID namespace, where the kernel
 * never acts on the machine (see backend_native_root_test.ts).
 * @module
 */
import type { PowerBackend } from "./backend.ts";

/** Register the suite's tests under `name`. */
export function powerBackendConformance(
  name: string,
  make: () => PowerBackend,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (b: PowerBackend) => Promise<void>) =>
    Deno.test({ name: `${name}: ${title}`, ignore: options.ignore, fn: () => fn(make()) });

  test("sync resolves", async (b) => {
    await b.sync();
  });
}
