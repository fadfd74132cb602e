/**
 * The conformance suite against the native backend, meant to run only inside
 * a throwaway network namespace: `backend_native_root_test.ts` starts it with
 * `ip netns exec <ns> deno test -A platform/network/native_netns_suite.ts`
 * and MACHINED_NETNS=<ns>. Without that variable it registers nothing, so it
 * can never touch the host's interfaces.
 * @module
 */
import { NativeNetworkBackend } from "./backend_native.ts";
import { registerNetworkConformance } from "./backend_conformance.ts";

async function ip(...args: string[]): Promise<void> {
  const out = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`ip ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
}

if (Deno.env.get("MACHINED_NETNS")) {
  let n = 0;
  const backend = new NativeNetworkBackend();
  registerNetworkConformance("native network backend (netns)", {
    async setup() {
      n++;
      const a = `mta${n}`, b = `mtb${n}`;
      await ip("link", "add", a, "type", "veth", "peer", "name", b);
      return { backend, a, b };
    },
    async teardown(env) {
      await ip("link", "del", env.a);
    },
  });
}
