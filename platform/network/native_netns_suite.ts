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

/** Which virtual link kinds this kernel can create (a CI kernel has all; some VMs lack bond, 8021q). */
async function kernelKinds(): Promise<Set<string>> {
  const kinds = new Set<string>();
  for (const kind of ["bridge", "bond", "wireguard"]) {
    const ok = await ip("link", "add", `mtprobe-${kind}`, "type", kind).then(
      () => true,
      () => false,
    );
    if (ok) {
      kinds.add(kind);
      await ip("link", "del", `mtprobe-${kind}`);
    }
  }
  if (kinds.has("bridge")) {
    await ip("link", "add", "mtprobe-br", "type", "bridge");
    const vlan = await ip(
      "link",
      "add",
      "link",
      "mtprobe-br",
      "name",
      "mtprobe-v",
      "type",
      "vlan",
      "id",
      "2",
    )
      .then(() => true, () => false);
    if (vlan) kinds.add("vlan");
    await ip("link", "del", "mtprobe-br");
  }
  return kinds;
}

if (Deno.env.get("MACHINED_NETNS")) {
  const kinds = await kernelKinds();
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
    kinds,
  });
}
