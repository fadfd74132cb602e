/**
 * The full case's private-CA checks (issue 32, `machine.trusted_roots`): a
 * host server behind a CA the node does not know, reached by the guest at
 * `https://10.0.2.2:PORT` through QEMU's user network. It serves a page the
 * payload fetches and, as a minimal OCI registry, one image containerd pulls
 * (cri/testing_oci.ts). Before the CA is configured both are refused (the
 * payload logs the certificate error; `machinectl images pull` fails with
 * containerd's x509 error); once a config naming it is applied on the
 * running node, the payload's next fetch succeeds without a restart (it
 * builds its TLS client from `SSL_CERT_FILE` on every try) and containerd,
 * restarted by machined because the bundle changed, pulls the image.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ociImage, startOciRegistry } from "../cri/testing_oci.ts";
import { createCertificateAuthority, issueServerCertificate } from "../pki/mod.ts";
import { tar } from "../machinectl/mod.ts";
import { machinectl } from "./helpers.ts";

/** The address the guest reaches the host by on QEMU's user network. */
const HOST_FROM_GUEST = "10.0.2.2";
const PAGE = "/private-ca/hello";
const PAGE_TEXT = "hello from behind a private CA";

/** The host's server and what the node is told about it. */
export interface PrivateCaSite {
  /** The CA's certificate: what `machine.trusted_roots` carries once trusted. */
  readonly caPem: string;
  /** The page's URL as the guest sees it. */
  readonly pageUrl: string;
  /** The image reference as the guest sees it. */
  readonly imageRef: string;
  /** The image's id in the CRI store (its config's digest). */
  readonly imageId: string;
  readonly requests: readonly string[];
  close(): Promise<void>;
}

/** Starts the server on every host address (QEMU forwards 10.0.2.2 to the host's loopback). */
export async function startPrivateCaSite(): Promise<PrivateCaSite> {
  const ca = await createCertificateAuthority({ commonName: "e2e private CA" });
  const server = await issueServerCertificate({
    ca,
    hostnames: [],
    addresses: [HOST_FROM_GUEST],
  });
  const layer = tar([{ name: "hello", data: new TextEncoder().encode(PAGE_TEXT + "\n") }]);
  const image = await ociImage(layer);
  const registry = startOciRegistry({
    hostname: "127.0.0.1",
    certPem: server.certPem,
    keyPem: server.keyPem,
    images: new Map([["e2e/hello:1", image]]),
    pages: new Map([[PAGE, PAGE_TEXT]]),
  });
  const at = `${HOST_FROM_GUEST}:${registry.port}`;
  return {
    caPem: ca.certPem,
    pageUrl: `https://${at}${PAGE}`,
    imageRef: `${at}/e2e/hello:1`,
    imageId: image.config.digest,
    requests: registry.requests,
    close: () => registry.close(),
  };
}

/**
 * JavaScript for the payload: every 2 s, fetch `url` with a TLS client built from the bundle
 * `SSL_CERT_FILE` names (read again each time), and log the outcome when it changes.
 */
export function payloadFetchLoop(url: string): string {
  return `
let lastFetch = "";
async function fetchOnce() {
  let said;
  let client;
  try {
    client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(Deno.env.get("SSL_CERT_FILE"))] });
    const r = await fetch(${JSON.stringify(url)}, { client, signal: AbortSignal.timeout(5000) });
    said = "ok " + r.status + " " + (await r.text()).trim();
  } catch (e) {
    const why = String(e) + (e && e.cause ? ": " + String(e.cause) : "");
    said = "refused " + why.replace(/\\s+/g, " ").slice(0, 300);
  } finally {
    client?.close();
  }
  if (said !== lastFetch) console.log("payload: fetch " + said);
  lastFetch = said;
}
setInterval(fetchOnce, 2000);
fetchOnce();
`;
}

/** What `machinectl logs payload` says about its fetches, in order. */
async function fetchLines(config: string, port: number): Promise<string[]> {
  const r = await machinectl(config, port, "logs", "payload");
  return r.out.split("\n").filter((l) => l.includes("payload: fetch "));
}

async function until<T>(
  what: string | (() => string),
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    const said = typeof what === "string" ? what : what();
    assert.ok(performance.now() < deadline, `${said} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Before the CA is configured: the payload's fetch and containerd's pull are both refused. */
export async function checkUntrusted(site: PrivateCaSite, config: string, port: number) {
  const refused = await until("the payload's fetch refused", 60_000, async () => {
    const lines = await fetchLines(config, port);
    return lines.find((l) => l.includes("payload: fetch refused"));
  });
  assert.match(refused, /certificate|UnknownIssuer/i, refused);
  const pull = await machinectl(config, port, "images", "pull", site.imageRef);
  assert.equal(pull.code, 1, pull.out);
  assert.match(pull.err, /x509|unknown authority/, pull.err);
  const images = await machinectl(config, port, "images", "-o", "json");
  assert.ok(!images.out.includes(site.imageId), "nothing was pulled");
}

/**
 * After a config naming the CA was applied: the payload's fetch succeeds without a restart,
 * and containerd (restarted for the new bundle) pulls the image. Returns the seconds from
 * `appliedAt` (performance.now()) to each.
 */
export async function checkTrusted(
  site: PrivateCaSite,
  config: string,
  port: number,
  appliedAt: number,
): Promise<{ payloadFetchOkS: number; imagePulledS: number }> {
  await until("the payload's fetch accepted", 60_000, async () => {
    const lines = await fetchLines(config, port);
    return lines.find((l) => l.includes(`payload: fetch ok 200 ${PAGE_TEXT}`));
  });
  const payloadFetchOkS = +((performance.now() - appliedAt) / 1000).toFixed(1);
  // containerd restarts for the new bundle: pull once its CRI answers again.
  let last = "";
  await until(() => `containerd pulled ${site.imageRef} (last: ${last})`, 120_000, async () => {
    const pull = await machinectl(config, port, "images", "pull", site.imageRef);
    last = pull.err;
    return pull.code === 0 ? pull.out : undefined;
  });
  const imagePulledS = +((performance.now() - appliedAt) / 1000).toFixed(1);
  const images = await machinectl(config, port, "images", "-o", "json");
  const listed = JSON.parse(images.out) as Array<{ id: string; tags: string[] }>;
  const pulled = listed.find((i) => i.id === site.imageId);
  assert.ok(pulled?.tags.includes(site.imageRef), images.out);
  assert.ok(site.requests.some((r) => /^GET \/v2\/e2e\/hello\/blobs\/\S+ 200$/.test(r)));
  return { payloadFetchOkS, imagePulledS };
}
