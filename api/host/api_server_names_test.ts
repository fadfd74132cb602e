import assert from "node:assert/strict";
import { createCertificateAuthority, issueServerCertificate } from "../../pki/mod.ts";
import {
  certificateNamesExactly,
  certificateSanList,
  sanList,
  wantedServerNames,
} from "./api_server_names.ts";

Deno.test("wanted names: hostname, cert_sans split into DNS and IP, every dialable address", () => {
  const names = wantedServerNames({
    hostname: "node-1",
    certSans: ["Node-1.Example.org", "*.pods.example.org", "203.0.113.10", "2001:DB8:0:0:0:0:0:1"],
    addresses: [
      { address: "10.0.0.5", scope: "global" },
      { address: "fe80::1", scope: "link" },
      { address: "fd00::5", scope: "global" },
      { address: "10.0.0.5", scope: "global" },
      { address: "127.0.0.1", scope: "host" },
    ],
  });
  assert.deepEqual(names.hostnames, ["node-1", "node-1.example.org", "*.pods.example.org"]);
  assert.deepEqual(names.addresses, [
    "10.0.0.5",
    "127.0.0.1",
    "2001:db8::1",
    "203.0.113.10",
    "fd00::5",
  ]);
  assert.deepEqual(sanList(names), [
    "dns:*.pods.example.org",
    "dns:localhost",
    "dns:node-1",
    "dns:node-1.example.org",
    "ip:10.0.0.5",
    "ip:127.0.0.1",
    "ip:2001:db8::1",
    "ip:203.0.113.10",
    "ip:::1",
    "ip:fd00::5",
  ]);
});

Deno.test("wanted names are independent of the order addresses arrive in", () => {
  const a = wantedServerNames({
    hostname: "n",
    certSans: [],
    addresses: [{ address: "10.0.0.5", scope: "global" }, { address: "10.0.0.6", scope: "global" }],
  });
  const b = wantedServerNames({
    hostname: "n",
    certSans: [],
    addresses: [{ address: "10.0.0.6", scope: "global" }, { address: "10.0.0.5", scope: "global" }],
  });
  assert.deepEqual(sanList(a), sanList(b));
});

Deno.test("a certificate matches its names exactly: a new address or a removed one is a difference", async () => {
  const ca = await createCertificateAuthority();
  const names = wantedServerNames({
    hostname: "node-1",
    certSans: ["node-1.example.org"],
    addresses: [{ address: "10.0.0.5", scope: "global" }, { address: "fd00::5", scope: "global" }],
  });
  const server = await issueServerCertificate({ ca, ...names });
  assert.deepEqual(certificateSanList(server.cert), sanList(names));
  assert.ok(certificateNamesExactly(server.cert, names));
  const more = { ...names, addresses: [...names.addresses, "10.0.0.7"] };
  assert.ok(!certificateNamesExactly(server.cert, more));
  const fewer = { ...names, addresses: ["10.0.0.5"] };
  assert.ok(!certificateNamesExactly(server.cert, fewer));
});
