import { equal, ok, rejects } from "node:assert/strict";
import { startApiFixture } from "../testing.ts";
import { METRICS_CONTENT_TYPE } from "./metrics_route.ts";

Deno.test("GET /metrics over mutual TLS: a reader gets machined's and apid's metrics", async () => {
  const f = await startApiFixture();
  const reader = f.pki.clients["os:reader"];
  const client = Deno.createHttpClient({
    caCerts: [f.pki.ca.certPem],
    cert: reader.certPem,
    key: reader.keyPem,
  });
  try {
    await f.client(reader).api.version({});
    const url = `https://localhost:${f.apid.port}/metrics`;
    const res = await fetch(url, { client });
    const text = await res.text();
    equal(res.status, 200, text);
    equal(res.headers.get("content-type"), METRICS_CONTENT_TYPE);
    ok(text.includes('machined_api_requests_total{method="Version",code="OK"} 1'), text);
    ok(/\nmachined_edge_connections_open [1-9]/.test(text), text);
    ok(/\nmachined_edge_connections_total [1-9]/.test(text), text);
    // The scrape itself went through machined's Metrics RPC, as the reader.
    ok((await f.registry.render()).includes('{method="Metrics",code="OK"} 1'));
    const post = await fetch(url, { client, method: "POST" });
    equal(post.status, 405);
    await post.body?.cancel();
    // TLS lets a certificate without any EKU through; the peer check refuses it.
    const noEku = Deno.createHttpClient({
      caCerts: [f.pki.ca.certPem],
      cert: f.pki.noEku.certPem,
      key: f.pki.noEku.keyPem,
    });
    try {
      // machined-edge refuses it in the handshake (alert unsupported_certificate).
      await rejects(() => fetch(url, { client: noEku }));
    } finally {
      noEku.close();
    }
  } finally {
    client.close();
    await f.close();
  }
});
