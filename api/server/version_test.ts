import { equal } from "node:assert/strict";
import { startApiFixture } from "../testing.ts";

Deno.test("Version reports the live hostname (HostnameStatus), else NodeActions'", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]);
    const v = await c.api.version({});
    equal(v.hostname, "test-node", "no HostnameStatus yet: NodeActions' hostname");
    equal(v.commit, "test");
    const status = (hostname: string) => ({ hostname, domainname: "", fqdn: hostname });
    f.store.create({
      type: "HostnameStatus",
      namespace: "network",
      id: "hostname",
      owner: "test",
      spec: status("applied-over-api"),
    });
    equal((await c.api.version({})).hostname, "applied-over-api");
    await f.store.modify(
      { type: "HostnameStatus", namespace: "network", id: "hostname" },
      "test",
      () => status("renamed"),
    );
    equal((await c.api.version({})).hostname, "renamed", "read at call time");
  } finally {
    await f.close();
  }
});
