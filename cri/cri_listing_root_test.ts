/**
 * The CRI listings against Debian's real containerd: an OCI image built here
 * (one tiny layer) is imported with `ctr` into the CRI's `k8s.io` namespace
 * and ListImages shows it by tag, digest and size; ListPodSandbox and
 * ListContainers answer (empty: running a pod needs a pause image, which this
 * offline machine cannot pull). Needs root and containerd (ctr ships with it).
 */
import assert from "node:assert/strict";
import { createCriClient } from "./cri_client.ts";
import { containerdConfigToml } from "./containerd_config.ts";
import { tar } from "../machinectl/mod.ts";
import { OCI_MANIFEST, ociArch, type OciBlob, type OciImage, ociImage } from "./testing_oci.ts";

const enc = new TextEncoder();

/** `image` as an OCI layout archive, its index naming it `ref`. */
function ociLayoutArchive(image: OciImage, ref: string): Uint8Array {
  const index = enc.encode(JSON.stringify({
    schemaVersion: 2,
    manifests: [{
      mediaType: OCI_MANIFEST,
      digest: image.manifest.digest,
      size: image.manifest.data.length,
      platform: { architecture: ociArch(), os: "linux" },
      annotations: { "io.containerd.image.name": ref, "org.opencontainers.image.ref.name": "1" },
    }],
  }));
  const entry = (b: OciBlob) => ({ name: `blobs/sha256/${b.digest.slice(7)}`, data: b.data });
  return tar([
    { name: "oci-layout", data: enc.encode('{"imageLayoutVersion":"1.0.0"}') },
    { name: "index.json", data: index },
    entry(image.layer),
    entry(image.config),
    entry(image.manifest),
  ]);
}

const hasContainerd = await Deno.stat("/usr/bin/containerd").then(() => true, () => false) &&
  await Deno.stat("/usr/bin/ctr").then(() => true, () => false);
const isRoot = Deno.uid() === 0;
Deno.test({
  name: "CRI listings against real containerd: an imported image, no pods or containers " +
    "(needs root and containerd)",
  ignore: !isRoot || !hasContainerd,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ctd-list-" });
    const socket = `${dir}/run/containerd.sock`;
    await Deno.writeTextFile(
      `${dir}/config.toml`,
      containerdConfigToml({ root: `${dir}/root`, state: `${dir}/state` }, socket),
    );
    const containerd = new Deno.Command("/usr/bin/containerd", {
      args: ["--config", `${dir}/config.toml`],
      stdout: "null",
      stderr: "null",
      stdin: "null",
    }).spawn();
    const client = createCriClient(socket, { timeoutMs: 5000 });
    try {
      const deadline = performance.now() + 30_000;
      while (!(await client.version().then(() => true, () => false))) {
        assert.ok(performance.now() < deadline, "containerd's CRI did not answer in 30 s");
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(await client.listPods(), []);
      assert.deepEqual(await client.listContainers(), []);
      const ref = "docker.io/machined/hello:1";
      const image = await ociImage(
        tar([{ name: "hello", data: enc.encode("hello from machined\n") }]),
      );
      await Deno.writeFile(`${dir}/hello.tar`, ociLayoutArchive(image, ref));
      const ctr = await new Deno.Command("/usr/bin/ctr", {
        args: ["-a", socket, "-n", "k8s.io", "images", "import", `${dir}/hello.tar`],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = new TextDecoder().decode(ctr.stdout) + new TextDecoder().decode(ctr.stderr);
      assert.equal(ctr.code, 0, said);
      const images = await client.listImages();
      const hello = images.find((i) => i.tags.includes(ref));
      assert.ok(hello, `no ${ref} in ${JSON.stringify(images)} (ctr: ${said})`);
      // The CRI's image id is the config's digest; repo digests come only from a pull.
      assert.equal(hello.id, image.config.digest);
      assert.ok(hello.sizeBytes > 0);
      assert.deepEqual(hello.digests, []);
    } finally {
      client.close();
      containerd.kill("SIGTERM");
      await containerd.status;
      await new Deno.Command("umount", { args: ["-R", `${dir}/root`], stderr: "null" }).output()
        .catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
