/**
 * The Ansible collection and rotate-ca on the fleet test's VMs (issue 31's
 * QEMU "Done when"), as steps of e2e/fleet_test.ts so they cost no boot of
 * their own: rotate-ca over the fleet cut before the second phase on the
 * last node (every node still answers, the cut one with the old client
 * config too), resumed and finished; then ansible-playbook, run inside the
 * network namespace like machinectl, in check mode (a hostname change
 * reported with its diff on each node, nothing applied), for real, a second
 * time (changed=0), and with a client certificate of another CA (the play
 * fails with the node's reason). The rolling upgrade runs later, on the
 * same installed collection (e2e/fleet_upgrade_steps.ts).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";
import { generateNodeBundle } from "../pki/mod.ts";
import { machinectlNs } from "./helpers.ts";
import type { RotateArgs } from "./fleet_rotate_ca.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, ".ci", "ansible-venv", "bin");

/** Whether ansible-core is installed (.ci/install.sh); the steps are ignored without it. */
export const HAVE_ANSIBLE = existsSync(join(BIN, "ansible-playbook"));

/** One fleet node as the fleet test knows it. */
export interface FleetNode {
  name: string;
  address: string;
  /** Its machine config file (rotate-ca keeps it in step with the node). */
  config: string;
}

/** The context the steps need from the fleet test. */
export interface FleetContext {
  t: Deno.TestContext;
  ns: string;
  work: string;
  nodes: FleetNode[];
  /** The admin client config (rotate-ca rewrites it). */
  clientConfig: string;
}

/** A process inside the namespace: exit code and output; killed after `ms`. */
export async function inNs(
  ns: string,
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
  ms = 600_000,
) {
  const out = await new Deno.Command("ip", {
    args: ["netns", "exec", ns, cmd, ...args],
    env: { NO_COLOR: "1", ANSIBLE_NOCOLOR: "1", ANSIBLE_FORCE_COLOR: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(ms),
  }).output();
  const d = new TextDecoder();
  return { code: out.code, text: d.decode(out.stdout) + d.decode(out.stderr) };
}

/** Each host's recap counters. */
export function recaps(text: string): Record<string, Record<string, number>> {
  const all: Record<string, Record<string, number>> = {};
  for (const m of text.matchAll(/^(\S+)\s+: (ok=.*)$/gm)) {
    all[m[1]] = Object.fromEntries(
      m[2].trim().split(/\s+/).map((kv) => [kv.split("=")[0], Number(kv.split("=")[1])]),
    );
  }
  return all;
}

/** Whether `node` answers `version` with client config `config`. */
async function answers(ns: string, config: string, node: FleetNode): Promise<boolean> {
  const r = await machinectlNs(ns, "--config", config, "-e", node.address, "version");
  return r.code === 0 && new RegExp(`hostname ${node.name}(?![-\\w])`).test(r.out);
}

/** rotate-ca cut on the last node, then resumed and finished. */
async function rotateSteps(c: FleetContext): Promise<void> {
  const { t, ns, nodes } = c;
  const old = join(c.work, "old-client.yaml");
  await Deno.copyFile(c.clientConfig, old);
  const rotate = (extra: Partial<RotateArgs>) => {
    const a: RotateArgs = {
      config: c.clientConfig,
      nodes: nodes.map((n) => `${n.address}:50000`),
      files: nodes.map((n) => n.config),
      finish: false,
      ...extra,
    };
    const script = join(ROOT, "e2e", "fleet_rotate_ca.ts");
    return inNs(ns, Deno.execPath(), ["run", "-A", "--cached-only", script, JSON.stringify(a)]);
  };
  const last = nodes[nodes.length - 1];
  await t.step(
    "rotate-ca cut before the second phase on the last node: all reachable",
    async () => {
      const t0 = performance.now();
      const r = await rotate({ cutBeforeSwitch: `${last.address}:50000` });
      assert.notEqual(r.code, 0, r.text);
      assert.match(r.text, /cut before switch/);
      console.log(`rotate-ca up to the cut: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      for (const n of nodes) {
        assert.ok(
          await answers(ns, c.clientConfig, n),
          `${n.name}, new config`,
        );
      }
      assert.ok(await answers(ns, old, last), `${last.name} (not switched), old config`);
      assert.ok(!(await answers(ns, old, nodes[0])), `${nodes[0].name} switched: old trust fails`);
    },
  );
  await t.step("rotate-ca resumed, then --finish: all reachable with the new CA", async () => {
    const r = await rotate({});
    assert.equal(r.code, 0, r.text);
    const f = await rotate({ finish: true });
    assert.equal(f.code, 0, f.text);
    assert.ok(!(r.text + f.text).includes("PRIVATE KEY"), "the CA key is never printed");
    for (const n of nodes) {
      assert.ok(await answers(ns, c.clientConfig, n), `${n.name} after finish`);
    }
    for (const n of nodes) assert.ok(!(await answers(ns, old, n)), `${n.name} refuses the old CA`);
  });
}

const PLAY = `- hosts: all
  gather_facts: false
  roles:
    - role: machined.fleet.node
      vars:
        machined_config_patches:
          - machine: {hostname: "{{ new_hostname }}"}
`;

const PLAY_FACTS = `- hosts: all
  gather_facts: false
  tasks:
    - machined.fleet.machined_facts:
        config: "{{ wrong_config }}"
        endpoint: "{{ machined_endpoint }}"
`;

/** Runs the playbook file at `path` with the fleet's inventory in the netns. */
export type RunPlaybook = (
  path: string,
  ...flags: string[]
) => Promise<{ code: number; text: string }>;

/**
 * The collection built and installed, an inventory of the fleet (every node
 * in group `machined`, as docs/playbooks expect, in the fleet's order);
 * returns the runner.
 */
async function collection(c: FleetContext): Promise<RunPlaybook> {
  const dir = resolve(c.work, "ansible");
  await Deno.mkdir(dir, { recursive: true });
  const galaxy = join(BIN, "ansible-galaxy");
  const built = await inNs(c.ns, galaxy, [
    "collection",
    "build",
    join(ROOT, "ansible"),
    "--output-path",
    dir,
    "--force",
  ]);
  assert.equal(built.code, 0, built.text);
  const tarball = join(dir, "machined-fleet-0.1.0.tar.gz");
  const collections = join(dir, "collections");
  const inst = await inNs(c.ns, galaxy, ["collection", "install", tarball, "-p", collections]);
  assert.equal(inst.code, 0, inst.text);
  const hosts: Record<string, unknown> = {};
  for (const n of c.nodes) {
    hosts[n.name] = {
      ansible_connection: "local",
      ansible_python_interpreter: "{{ ansible_playbook_python }}",
      machined_endpoint: `${n.address}:50000`,
      machined_config_file: resolve(c.clientConfig),
      machined_config_template: resolve(n.config),
      new_hostname: `${n.name}-ans`,
      wrong_config: join(dir, "wrong.yaml"),
    };
  }
  const inventory = join(dir, "inventory.yml");
  await Deno.writeTextFile(inventory, stringify({ all: { children: { machined: { hosts } } } }));
  return (path: string, ...flags: string[]) =>
    inNs(c.ns, join(BIN, "ansible-playbook"), ["-i", inventory, path, ...flags], {
      ANSIBLE_COLLECTIONS_PATH: collections,
      ANSIBLE_HOST_KEY_CHECKING: "0",
    }, 1_800_000);
}

/** Check mode, a real run, a second run, a wrong client certificate. */
async function playSteps(c: FleetContext): Promise<RunPlaybook> {
  const { t, ns, nodes } = c;
  const run = await collection(c);
  const play = async (text: string, ...flags: string[]) => {
    const path = join(c.work, "ansible", "play.yml");
    await Deno.writeTextFile(path, text);
    return await run(path, ...flags);
  };
  const list = nodes.map((n) => n.address).join(",");
  const hostnames = async () => {
    const v = await machinectlNs(ns, "--config", c.clientConfig, "-n", list, "version");
    assert.equal(v.code, 0, v.err);
    return v.out;
  };
  await t.step(
    "ansible --check --diff: a hostname change on each node, nothing applied",
    async () => {
      const r = await play(PLAY, "--check", "--diff");
      assert.equal(r.code, 0, r.text);
      const rc = recaps(r.text);
      for (const n of nodes) {
        assert.equal(rc[n.name]?.changed, 1, r.text);
        assert.match(
          r.text,
          new RegExp(`-\\s+hostname: ${n.name}\\n\\+\\s+hostname: ${n.name}-ans`),
        );
      }
      const v = await hostnames();
      for (const n of nodes) assert.match(v, new RegExp(`hostname ${n.name}(?![-\\w])`), v);
    },
  );
  await t.step("ansible: a real run applies it, a second run reports changed=0", async () => {
    const t0 = performance.now();
    const r = await play(PLAY);
    assert.equal(r.code, 0, r.text);
    for (const n of nodes) assert.equal(recaps(r.text)[n.name]?.changed, 1, r.text);
    console.log(
      `ansible apply on ${nodes.length} nodes: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const v = await hostnames();
    for (const n of nodes) assert.match(v, new RegExp(`hostname ${n.name}-ans(?![-\\w])`), v);
    const again = await play(PLAY);
    assert.equal(again.code, 0, again.text);
    for (const n of nodes) assert.equal(recaps(again.text)[n.name]?.changed, 0, again.text);
  });
  await t.step("ansible with a client certificate of another CA: the node's reason", async () => {
    const other = await generateNodeBundle({
      name: "stranger",
      endpoint: "127.0.0.1:50000",
      outDir: join(c.work, "ansible", "stranger"),
      renderMachineConfig: () => "",
    });
    const mine = parse(await Deno.readTextFile(c.clientConfig));
    const doc = parse(await Deno.readTextFile(other.paths.clientConfig));
    doc.contexts[doc.context].ca = mine.contexts[mine.context].ca;
    await Deno.writeTextFile(join(c.work, "ansible", "wrong.yaml"), stringify(doc));
    const r = await play(PLAY_FACTS);
    assert.notEqual(r.code, 0, r.text);
    for (const n of nodes) assert.equal(recaps(r.text)[n.name]?.failed, 1, r.text);
    assert.match(r.text, /TLS alert unknown_ca/);
    assert.match(r.text, /"tls_alert": "unknown_ca"/);
  });
  return run;
}

/**
 * rotate-ca, then the Ansible plays, on the fleet's running nodes. After it
 * the nodes carry hostname `<name>-ans` and the rotated CA (the client
 * config is rewritten in place), so the fleet test's later rolling reboot
 * brings each node back with the config Ansible and rotate-ca left on STATE.
 * Returns the playbook runner (undefined without ansible-core).
 */
export async function fleetAnsibleSteps(c: FleetContext): Promise<RunPlaybook | undefined> {
  await rotateSteps(c);
  if (!HAVE_ANSIBLE) {
    await c.t.step({ name: "ansible (needs ansible-core: .ci/install.sh)", ignore: true, fn() {} });
    return undefined;
  }
  return await playSteps(c);
}
