/**
 * machinectl containers, images, inspect dependencies and support against the
 * real apid and machined-side server (a fake CRI behind Containers/Images).
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { fakeServiceSpec, startApiFixture } from "../api/testing.ts";
import { parseMachineConfig } from "../config/mod.ts";
import { readTarGz } from "./support/tar.ts";
import { clientConfig, runCli as run } from "./testing.ts";

function hasDot(): boolean {
  try {
    return new Deno.Command("dot", { args: ["-V"], stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("machinectl containers and images: table, json and yaml (reader)", async () => {
  const f = await startApiFixture();
  try {
    const reader = await clientConfig(f, "os:reader");
    let r = await run(reader, "containers");
    equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    match(lines[0], /^POD\s+NAMESPACE\s+CONTAINER\s+ID\s+IMAGE\s+STATE\s+CREATED$/);
    match(lines[1], /^web\s+default\s+web\s+c1\s+docker\.io\/library\/nginx:1\s+running\s+2023-/);
    match(lines[2], /^web\s+default\s+sidecar\s+c2\s+.*exited/);
    r = await run(reader, "containers", "-o", "json");
    const doc = JSON.parse(r.out);
    deepEqual(doc.containers.map((c: { id: string }) => c.id), ["c1", "c2"]);
    equal(doc.pods[0].created, "2023-11-14T22:13:20.123Z");
    r = await run(reader, "containers", "-o", "yaml");
    equal(parse(r.out).pods[0].name, "web");
    r = await run(reader, "images");
    match(r.out.split("\n")[1], /^docker\.io\/library\/nginx:1\s+aa\s+69\.6 MiB$/);
    r = await run(reader, "images", "-o", "json");
    equal(JSON.parse(r.out)[0].sizeBytes, 73_000_000);
    r = await run(reader, "images", "-o", "wide");
    equal(r.code, 2, "a usage error, refused before the call like every -o");
    match(r.err, /unknown output format "wide"/);
    f.cri.failWith = 14; // Unavailable
    r = await run(reader, "containers");
    equal(r.code, 1);
    match(r.err, /containerd's CRI on ".*cri\.sock" did not answer/);
  } finally {
    await f.close();
  }
});

Deno.test("machinectl images pull: containerd pulls on the node (operator); a reader and a bad reference are refused", async () => {
  const f = await startApiFixture();
  try {
    const ref = "registry.example:5000/e2e/hello:1";
    f.cri.pullable.set(ref, {
      id: "sha256:bb",
      tags: [ref],
      digests: [],
      sizeBytes: 9,
      pinned: false,
    });
    const operator = await clientConfig(f, "os:operator");
    let r = await run(operator, "images", "pull", ref);
    equal(r.code, 0, r.err);
    match(r.out, /^pulled registry\.example:5000\/e2e\/hello:1: sha256:bb \(127\.0\.0\.1:\d+\)$/);
    r = await run(operator, "images");
    match(r.out, /registry\.example:5000\/e2e\/hello:1\s+bb\s+9 B/);
    r = await run(operator, "images", "pull");
    equal(r.code, 2);
    match(r.err, /usage: machinectl images pull IMAGE/);
    r = await run(operator, "images", "pull", "registry.example/nope:1");
    equal(r.code, 1);
    match(r.err, /containerd could not pull "registry\.example\/nope:1"/);
    r = await run(await clientConfig(f, "os:reader"), "images", "pull", ref);
    equal(r.code, 1);
    match(r.err, /os:operator/);
  } finally {
    await f.close();
  }
});

Deno.test("machinectl inspect dependencies: DOT from the controller graph", async () => {
  const f = await startApiFixture();
  try {
    const r = await run(await clientConfig(f, "os:reader"), "inspect", "dependencies");
    equal(r.code, 0, r.err);
    match(r.out, /^digraph controllers \{/);
    ok(r.out.includes('"MachineConfig" -> "test.A" [style=dashed];'), r.out);
    ok(r.out.includes('"test.A" -> "MachineStatus" [penwidth=2];'), r.out);
    const png = await run(await clientConfig(f, "os:reader"), "inspect", "deps", "-o", "png");
    equal(png.code, 2);
  } finally {
    await f.close();
  }
});

Deno.test("machinectl inspect dependencies -o svg/png renders with graphviz (needs dot)", {
  ignore: !hasDot(),
}, async () => {
  const f = await startApiFixture();
  try {
    const config = await clientConfig(f, "os:reader");
    const r = await run(config, "inspect", "dependencies", "-o", "svg");
    equal(r.code, 0, r.err);
    match(r.out, /<svg[\s\S]*test\.A|<svg[\s\S]*>A</);
    ok(r.out.includes("MachineStatus"));
    const file = join(f.pki.dir, "g.png");
    equal((await run(config, "inspect", "dependencies", "-o", "png", "--file", file)).code, 0);
    deepEqual([...(await Deno.readFile(file)).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  } finally {
    await f.close();
  }
});

Deno.test("machinectl support: a .tar.gz with every part and no key material", async () => {
  const f = await startApiFixture();
  const indent = (pem: string) => pem.trim().split("\n").map((l) => `      ${l}`).join("\n");
  const parsed = parseMachineConfig(
    `version: v1alpha1
machine:
  hostname: n1
  services:
    - id: web
      command: ["/bin/web"]
      env:
        API_TOKEN: s3cret-token
  ca:
    crt: |
${indent(f.pki.ca.certPem)}
    key: |
${indent(f.pki.ca.keyPem)}
`,
    "test.yaml",
  );
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
  f.store.create({
    type: "MachineConfig",
    namespace: "config",
    id: "v1alpha1",
    owner: "test",
    spec: { source: "test.yaml", config: parsed.config },
  });
  f.services.add("web", { ...fakeServiceSpec(["/bin/web"]), env: { API_TOKEN: "s3cret-token" } });
  f.logs.push("payload", "payload says hi");
  f.logs.push("containerd", "containerd up");
  f.logs.push("web", "web up");
  f.kernelLog.log("Linux version 6.1-test");
  try {
    const file = join(f.pki.dir, "bundle.tar.gz");
    // An admin's bundle: redaction does not depend on who collects it.
    const r = await run(await clientConfig(f, "os:admin"), "support", "-o", file);
    equal(r.code, 0, r.err);
    match(r.out, /^wrote .*bundle\.tar\.gz: \d+ files/);
    const entries = await readTarGz(await Deno.readFile(file));
    const files = new Map(entries.map((e) => [e.name, new TextDecoder().decode(e.data)]));
    for (
      const name of [
        "version.yaml",
        "resources/MachineStatus.yaml",
        "resources/ControllerStatus.yaml",
        "resources/MachineConfig.yaml",
        "config.yaml",
        "services.yaml",
        "logs/machined.log",
        "logs/payload.log",
        "dmesg.txt",
        "controllers.dot",
        "metrics.txt",
        "containers.yaml",
        "images.yaml",
        "memory.yaml",
        "stats.yaml",
        "mounts.yaml",
        "cgroups.yaml",
        "netstat.yaml",
        "errors.txt",
      ]
    ) ok(files.has(name), `${name} in ${[...files.keys()].join(", ")}`);
    equal(files.size, entries.length);
    equal(files.get("errors.txt"), "every part was collected\n");
    ok(files.get("logs/payload.log")!.includes("payload says hi"));
    ok(files.get("dmesg.txt")!.includes("Linux version 6.1-test"));
    match(files.get("controllers.dot")!, /^digraph controllers/);
    equal(parse(files.get("version.yaml")!).node.version, "0.1.0-test");
    equal(parse(files.get("config.yaml")!).config.machine.hostname, "n1");
    ok(files.get("metrics.txt")!.includes("machined_api_requests_total"));
    const keyBody = f.pki.ca.keyPem.split("\n")[1];
    for (const [name, text] of files) {
      ok(!text.includes("PRIVATE KEY"), `${name} holds a private key`);
      ok(!text.includes(keyBody), `${name} holds the CA key's base64`);
      ok(!text.includes("s3cret-token"), `${name} holds a service env value`);
    }
  } finally {
    await f.close();
  }
});
