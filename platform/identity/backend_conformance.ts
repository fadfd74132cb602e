/**
 * One suite both identity backends pass: the fake always, the native one as
 * root inside a fresh UTS namespace (the host's hostname is never changed).
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { type IdentityBackend, MAX_UTS_NAME } from "./backend.ts";

/** Register the suite's tests under `name`. */
export function identityBackendConformance(
  name: string,
  make: () => IdentityBackend,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (b: IdentityBackend) => Promise<void>) =>
    Deno.test({ name: `${name}: ${title}`, ignore: options.ignore, fn: () => fn(make()) });

  test("hostname and domain name read back what was set", async (b) => {
    await b.setHostname("node-1.example");
    assert.equal(await b.hostname(), "node-1.example");
    await b.setHostname("node-1.example"); // idempotent
    await b.setDomainname("cluster.local");
    assert.equal(await b.domainname(), "cluster.local");
  });

  test("an over-long name is a typed EINVAL and changes nothing", async (b) => {
    await b.setHostname("before");
    await assert.rejects(
      b.setHostname("x".repeat(MAX_UTS_NAME + 1)),
      (e) => isSysError(e, "EINVAL") && e.op === "sethostname",
    );
    assert.equal(await b.hostname(), "before");
    await b.setHostname("y".repeat(MAX_UTS_NAME));
  });
}
