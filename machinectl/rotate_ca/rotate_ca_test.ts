/**
 * CA rotation over three nodes, root-free and through apid: each node is a
 * real machined store, config keeper and API PKI owner (api/host/api_pki.ts)
 * behind machined-edge, with real certificates. The rotation is cut before a
 * step on one node, at each phase; at every cut each node answers the client
 * config as it then stands, and the next run resumes and completes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { renderConfigTemplate } from "../../config/mod.ts";
import {
  addContext,
  contextFromPem,
  createCertificateAuthority,
  emptyClientConfig,
  issueClientCertificate,
  readClientConfig,
  resolveCredentials,
  writeClientConfig,
} from "../../pki/mod.ts";
import { startTestNode, type TestNode } from "../../api/host/testing_api.ts";
import { observeCa } from "./node_access.ts";
import { rotateCa } from "./rotation.ts";
import type { RotationStep } from "./plan.ts";
import { readRotationState, rotationStatePath } from "./rotation_state.ts";
import { caOfConfigText } from "./config_edit.ts";
import type { PemCredentials } from "./rotation_state.ts";
import { runCli } from "../testing.ts";

async function reaches(node: string, creds: PemCredentials): Promise<boolean> {
  try {
    await observeCa(node, creds);
    return true;
  } catch {
    return false;
  }
}

/** A cut: the rotation stops before `step` on `node`. */
function cutBefore(node: string, step: RotationStep) {
  return (n: string, s: RotationStep) => {
    if (n === node && s === step) throw new Error(`cut before ${step} on ${node}`);
  };
}

Deno.test("rotate-ca over three nodes: cut at each phase, every node stays reachable, resumed runs complete", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-rotate-ca-" });
  const oldCa = await createCertificateAuthority();
  const nodes: TestNode[] = [];
  try {
    const files: string[] = [];
    for (const name of ["node-1", "node-2", "node-3"]) {
      const text = renderConfigTemplate({
        hostname: name,
        ca: { certPem: oldCa.certPem, keyPem: oldCa.keyPem },
      });
      const file = join(dir, `${name}.yaml`);
      await Deno.writeTextFile(file, text);
      files.push(file);
      await Deno.mkdir(join(dir, name));
      nodes.push(await startTestNode(join(dir, name), text));
    }
    const endpoints = nodes.map((n) => n.endpoint);
    const admin = await issueClientCertificate({ ca: oldCa, name: "admin", role: "os:admin" });
    const old: PemCredentials = {
      caPem: oldCa.certPem,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
    };
    const configPath = join(dir, "machinectl.yaml");
    await writeClientConfig(
      configPath,
      addContext(emptyClientConfig(), "fleet", {
        ...contextFromPem(endpoints, old),
        nodes: endpoints,
      }),
    );
    const current = async () => resolveCredentials(await readClientConfig(configPath));
    const lines: string[] = [];
    const run = (finish: boolean, beforeStep?: (n: string, s: RotationStep) => void) =>
      rotateCa({
        nodes: endpoints,
        files,
        configPath,
        finish,
        out: (l) => lines.push(l),
        beforeStep,
      });

    // Cut 1: node-1 accepted the new CA, node-2 and node-3 did not.
    await assert.rejects(run(false, cutBefore(endpoints[1], "accept")), /cut before accept/);
    const state = (await readRotationState(rotationStatePath(configPath)))!;
    assert.equal(
      (await current()).certPem,
      admin.certPem,
      "the client config is still the old one",
    );
    for (const n of endpoints) assert.ok(await reaches(n, await current()), `${n} after cut 1`);
    assert.ok(await reaches(endpoints[0], state.next), "node-1 accepts the new credentials");
    assert.ok(!(await reaches(endpoints[1], state.next)), "node-2 does not yet");

    // Cut 2: resumed; every node accepted, node-1 switched, node-2 and node-3 did not.
    await assert.rejects(run(false, cutBefore(endpoints[1], "switch")), /cut before switch/);
    assert.equal((await current()).certPem, state.next.certPem, "the new client config is written");
    for (const n of endpoints) assert.ok(await reaches(n, await current()), `${n} after cut 2`);
    assert.ok(!(await reaches(endpoints[0], old)), "node-1 serves the new CA: old trust fails");
    assert.ok(await reaches(endpoints[1], old), "node-2 still serves the old CA");
    const f1 = caOfConfigText(await Deno.readTextFile(files[0]), files[0]);
    assert.equal(f1.crt?.trim(), state.newCa.certPem.trim(), "node-1's file follows its node");
    assert.deepEqual(f1.accepted.map((p) => p.trim()), [oldCa.certPem.trim()]);

    // Cut 3: before finish. Every node serves the new CA and still accepts old certificates.
    const result = await run(false);
    assert.deepEqual(Object.values(result), ["finish", "finish", "finish"]);
    const oldCertNewTrust = { ...old, caPem: state.next.caPem };
    for (const n of endpoints) {
      assert.ok(await reaches(n, await current()), `${n} before finish`);
      assert.ok(await reaches(n, oldCertNewTrust), `${n} still accepts the old certificate`);
    }
    // The CLI, as an operator runs it, with the new client config.
    const r = await runCli(configPath, "get", "machineconfig", "-n", endpoints.join(","));
    assert.equal(r.code, 0, r.err);

    // Finish: the old CA is dropped; the client config trusts the new CA alone.
    // (through the CLI, as an operator runs it: the context's nodes, one file each)
    const fin = await runCli(configPath, "rotate-ca", "--finish", ...files);
    assert.equal(fin.code, 0, fin.err);
    assert.match(fin.out, /rotation finished/);
    assert.equal(fin.out.match(/: rotated/g)?.length, 3, fin.out);
    assert.ok(!fin.out.includes("PRIVATE KEY"), "the CA key is never printed");
    assert.equal((await current()).caPem.trim(), state.newCa.certPem.trim());
    for (const n of endpoints) {
      assert.ok(await reaches(n, await current()), `${n} after finish`);
      assert.ok(!(await reaches(n, oldCertNewTrust)), `${n} refuses the old certificate`);
    }
    assert.equal(await readRotationState(rotationStatePath(configPath)), undefined);
    for (const file of files) {
      const ca = caOfConfigText(await Deno.readTextFile(file), file);
      assert.equal(ca.crt?.trim(), state.newCa.certPem.trim());
      assert.deepEqual(ca.accepted, []);
    }
    assert.ok(!lines.join("\n").includes("PRIVATE KEY"), "the CA key is never printed");
  } finally {
    for (const n of nodes) await n.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rotate-ca refuses a client config that is not os:admin, and files with another CA", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-rotate-ca-refuse-" });
  try {
    const ca = await createCertificateAuthority();
    const file = join(dir, "node.yaml");
    await Deno.writeTextFile(
      file,
      renderConfigTemplate({ hostname: "n", ca: { certPem: ca.certPem, keyPem: ca.keyPem } }),
    );
    const configPath = join(dir, "machinectl.yaml");
    const write = async (role: "os:operator" | "os:admin", trust = ca.certPem) => {
      const c = await issueClientCertificate({ ca, name: "someone", role });
      const ctx = contextFromPem(["127.0.0.1:1"], {
        caPem: trust,
        certPem: c.certPem,
        keyPem: c.keyPem,
      });
      await writeClientConfig(configPath, addContext(emptyClientConfig(), "x", ctx));
    };
    const run = () =>
      rotateCa({ nodes: ["127.0.0.1:1"], files: [file], configPath, finish: false, out: () => {} });
    await write("os:operator");
    await assert.rejects(run(), /needs an os:admin client config/);
    await write("os:admin", (await createCertificateAuthority()).certPem);
    await assert.rejects(run(), /machine\.ca\.crt is not the CA/);
    assert.equal(
      await readRotationState(rotationStatePath(configPath)),
      undefined,
      "no state left",
    );
    await assert.rejects(
      rotateCa({ nodes: ["a", "b"], files: [file], configPath, finish: false, out: () => {} }),
      /one machine config file per node/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
