/**
 * Test support for containerd's image paths: a one-layer OCI image built in
 * memory, served by a minimal read-only registry over HTTPS (for PullImage through a private CA).
 * The registry speaks the pull half of the OCI distribution API: `/v2/`,
 * manifests by tag or digest and blobs by digest, GET and HEAD, nothing else.
 *
 * @module
 */
const enc = new TextEncoder();
/** The media type of an OCI image manifest. */
export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

/** One content-addressed blob. */
export interface OciBlob {
  readonly digest: string;
  readonly mediaType: string;
  readonly data: Uint8Array;
}

/** A one-layer image: its manifest, config and layer. */
export interface OciImage {
  readonly manifest: OciBlob;
  readonly config: OciBlob;
  readonly layer: OciBlob;
}

async function sha256(data: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>));
  return `sha256:${[...d].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

async function blob(mediaType: string, data: Uint8Array): Promise<OciBlob> {
  return { digest: await sha256(data), mediaType, data };
}

/** The architecture name OCI uses for this host (`amd64`, `arm64`). */
export function ociArch(): string {
  return Deno.build.arch === "aarch64" ? "arm64" : "amd64";
}

/**
 * An image of one uncompressed layer, `layerTar` (a tar archive: the caller makes it, e.g.
 * with machinectl's `tar`, so this support module stays below machinectl).
 */
export async function ociImage(layerTar: Uint8Array): Promise<OciImage> {
  const layer = await blob("application/vnd.oci.image.layer.v1.tar", layerTar);
  const config = await blob(
    "application/vnd.oci.image.config.v1+json",
    enc.encode(JSON.stringify({
      architecture: ociArch(),
      os: "linux",
      config: { Cmd: ["/hello"] },
      rootfs: { type: "layers", diff_ids: [layer.digest] },
    })),
  );
  const descriptor = (b: OciBlob) => ({
    mediaType: b.mediaType,
    digest: b.digest,
    size: b.data.length,
  });
  const manifest = await blob(
    OCI_MANIFEST,
    enc.encode(JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: descriptor(config),
      layers: [descriptor(layer)],
    })),
  );
  return { manifest, config, layer };
}

/** A running registry; `close()` it. */
export interface OciRegistry {
  readonly port: number;
  /** Request lines served, e.g. `GET /v2/e2e/hello/manifests/1 200`. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** What the registry serves: `repository:tag` → image, and plain text pages by path. */
export interface OciRegistryOptions {
  readonly hostname: string;
  readonly port?: number;
  readonly certPem: string;
  readonly keyPem: string;
  readonly images: ReadonlyMap<string, OciImage>;
  readonly pages?: ReadonlyMap<string, string>;
}

const ROUTE = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/;

/** Starts the registry on HTTPS with the given server certificate. */
export function startOciRegistry(o: OciRegistryOptions): OciRegistry {
  const requests: string[] = [];
  const server = Deno.serve({
    hostname: o.hostname,
    port: o.port ?? 0,
    cert: o.certPem,
    key: o.keyPem,
    onListen: () => {},
  }, (req) => {
    const res = answer(o, req);
    requests.push(`${req.method} ${new URL(req.url).pathname} ${res.status}`);
    return res;
  });
  return {
    port: server.addr.port,
    requests,
    close: () => server.shutdown(),
  };
}

function answer(o: OciRegistryOptions, req: Request): Response {
  const path = new URL(req.url).pathname;
  if (req.method !== "GET" && req.method !== "HEAD") return new Response(null, { status: 405 });
  const page = o.pages?.get(path);
  if (page !== undefined) return new Response(page);
  if (path === "/v2/" || path === "/v2") return json("{}", "application/json", req);
  const m = ROUTE.exec(path);
  if (!m) return new Response(null, { status: 404 });
  const [, repository, kind, reference] = m;
  const found = kind === "manifests"
    ? manifestOf(o.images, repository, reference)
    : blobOf(o.images, repository, reference);
  if (!found) return new Response(null, { status: 404 });
  return json(found.data, found.mediaType, req, found.digest);
}

function manifestOf(images: ReadonlyMap<string, OciImage>, repo: string, ref: string) {
  const byTag = images.get(`${repo}:${ref}`);
  if (byTag) return byTag.manifest;
  return [...images.entries()].find(([k, i]) =>
    k.startsWith(`${repo}:`) && i.manifest.digest === ref
  )?.[1].manifest;
}

function blobOf(images: ReadonlyMap<string, OciImage>, repo: string, digest: string) {
  for (const [k, i] of images) {
    if (!k.startsWith(`${repo}:`)) continue;
    const b = [i.config, i.layer].find((x) => x.digest === digest);
    if (b) return b;
  }
  return undefined;
}

function json(
  body: string | Uint8Array,
  type: string,
  req: Request,
  digest?: string,
): Response {
  const data = typeof body === "string" ? enc.encode(body) : body;
  const headers: Record<string, string> = {
    "content-type": type,
    "content-length": String(data.length),
    "docker-distribution-api-version": "registry/2.0",
  };
  if (digest) headers["docker-content-digest"] = digest;
  return new Response(req.method === "HEAD" ? null : data as Uint8Array<ArrayBuffer>, { headers });
}
