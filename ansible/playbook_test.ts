/**
 * The collection end to end, as an operator uses it: built with
 * `ansible-galaxy collection build`, installed from the tarball with
 * `ansible-galaxy collection install`, and driven by `ansible-playbook`
 * against a dev-mode node through its real edge (mTLS, HTTP/1.1 Connect).
 * Check mode reports a hostname change without applying it, a real run
 * applies it, a second run changes nothing, facts return the version,
 * secrets are generated once, a client config kept in Ansible Vault is used
 * and never logged, ansible-doc renders the modules' documentation, the
 * example playbooks in docs/playbooks parse against the
 * installed collection, an upgrade stream's refusal and a client certificate
 * of another CA fail the play with the node's reason, and machined_power shuts
 * the node down and waits until its API is gone. Needs ansible-core in .ci/ansible-venv
 * (.ci/install.sh); root-free.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";
import { drain, waitFor } from "../dev/testing.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, ".ci", "ansible-venv", "bin");
const HAVE_ANSIBLE = existsSync(join(BIN, "ansible-playbook"));

/** Runs an Ansible tool from the venv; its exit code and output. */
async function ansible(tool: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(join(BIN, tool), {
    args,
    env: { ANSIBLE_NOCOLOR: "1", ANSIBLE_FORCE_COLOR: "0", ANSIBLE_HOST_KEY_CHECKING: "0", ...env },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(240_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, text };
}

/** The recap's counters of host `node1`. */
function recap(text: string): Record<string, number> {
  const m = /node1\s+: (ok=.*)$/m.exec(text);
  if (!m) throw new Error(`no recap in:\n${text}`);
  return Object.fromEntries(
    m[1].trim().split(/\s+/).map((kv) => {
      const [k, v] = kv.split("=");
      return [k, Number(v)];
    }),
  );
}

/** Starts dev mode in `dir`; its port and a stop function. */
async function devNode(dir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "dev",
      "--state",
      join(dir, "state"),
      "--listen",
      "127.0.0.1:0",
    ],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const out = drain(child.stdout);
  const err = drain(child.stderr);
  let exited = false;
  const status = child.status.then((st) => {
    exited = true;
    return st;
  });
  const stop = async () => {
    if (!exited) child.kill("SIGTERM");
    await status;
  };
  try {
    const port = await waitFor("dev mode's API", 120_000, () => {
      const m = /API on 127\.0\.0\.1:(\d+)/.exec(out.text);
      return Promise.resolve(m ? Number(m[1]) : undefined);
    });
    return { port, stop, exited: () => exited, status };
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${out.text}\n${err.text}`);
  }
}

const PLAY_ROLE = `- hosts: all
  gather_facts: false
  roles:
    - role: machined.fleet.node
      vars:
        machined_config_patches:
          - machine: {hostname: ansible-one}
        machined_facts_resources:
          - {type: MachineConfig, id: v1alpha1}
  post_tasks:
    - name: Keep the facts for the test
      ansible.builtin.copy:
        content: "{{ machined | to_json }}"
        dest: "{{ facts_out }}"
      check_mode: false
      changed_when: false
`;

const PLAY_SECRETS = `- hosts: all
  gather_facts: false
  tasks:
    - machined.fleet.machined_secrets:
        dest: "{{ secrets_dir }}"
        name: other
        endpoint: 127.0.0.1
        machinectl: ["${Deno.execPath()}", run, -A, "${join(ROOT, "machinectl", "main.ts")}"]
`;

const PLAY_FACTS = `- hosts: all
  gather_facts: false
  tasks:
    - machined.fleet.machined_facts:
        config: "{{ wrong_config }}"
        endpoint: "{{ machined_endpoint }}"
`;

const PLAY_VAULT = `- hosts: all
  gather_facts: false
  tasks:
    - machined.fleet.machined_facts:
        client_config: "{{ lookup('ansible.builtin.file', vaulted_config) }}"
        endpoint: "{{ machined_endpoint }}"
`;

const PLAY_UPGRADE = `- hosts: all
  gather_facts: false
  tasks:
    - machined.fleet.machined_upgrade:
        config: "{{ machined_config_file }}"
        endpoint: "{{ machined_endpoint }}"
        src: "{{ bundle }}"
`;

const PLAY_SHUTDOWN = `- hosts: all
  gather_facts: false
  tasks:
    - machined.fleet.machined_power:
        config: "{{ machined_config_file }}"
        endpoint: "{{ machined_endpoint }}"
        state: shutdown
        wait_timeout: 60
      register: power
    - ansible.builtin.debug:
        var: power
`;

Deno.test({
  name: "ansible-playbook drives a dev-mode node: check mode, apply, idempotence, facts, " +
    "secrets once, a wrong client certificate" +
    (HAVE_ANSIBLE ? "" : " (needs ansible-core: .ci/install.sh)"),
  ignore: !HAVE_ANSIBLE,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "machined-ansible-" });
    const node = await devNode(dir);
    try {
      const state = join(dir, "state");
      const built = await ansible("ansible-galaxy", [
        "collection",
        "build",
        join(ROOT, "ansible"),
        "--output-path",
        dir,
        "--force",
      ]);
      equal(built.code, 0, built.text);
      const tarball = join(dir, "machined-fleet-0.1.0.tar.gz");
      const collections = join(dir, "collections");
      const installed = await ansible("ansible-galaxy", [
        "collection",
        "install",
        tarball,
        "-p",
        collections,
      ]);
      equal(installed.code, 0, installed.text);
      const template = join(dir, "machine.yaml.j2");
      await Deno.copyFile(join(state, "config.yaml"), template);
      const facts = join(dir, "facts.json");
      const inventory = join(dir, "inventory.yml");
      await Deno.writeTextFile(
        inventory,
        stringify({
          all: {
            hosts: {
              node1: {
                ansible_connection: "local",
                ansible_python_interpreter: "{{ ansible_playbook_python }}",
                machined_endpoint: `127.0.0.1:${node.port}`,
                machined_config_file: join(state, "machinectl.yaml"),
                machined_config_template: template,
                facts_out: facts,
                secrets_dir: join(dir, "other"),
                wrong_config: join(dir, "wrong.yaml"),
                vaulted_config: join(dir, "vaulted.yaml"),
                bundle: join(dir, "fake.bundle"),
              },
            },
          },
        }),
      );
      const env = { ANSIBLE_COLLECTIONS_PATH: collections };
      const play = async (text: string, ...flags: string[]) => {
        const path = join(dir, "play.yml");
        await Deno.writeTextFile(path, text);
        return await ansible("ansible-playbook", ["-i", inventory, path, ...flags], env);
      };
      const hostname = async () =>
        JSON.parse(await Deno.readTextFile(facts)).resources[0].spec.config.machine.hostname;

      await t.step(
        "check mode reports the hostname change with the node's diff, applies nothing",
        async () => {
          const r = await play(PLAY_ROLE, "--check", "--diff");
          equal(r.code, 0, r.text);
          equal(recap(r.text).changed, 1, r.text);
          match(r.text, /-\s+hostname: machined-dev\n\+\s+hostname: ansible-one/);
          equal(await hostname(), "machined-dev");
        },
      );

      await t.step("a real run applies it; facts return the version", async () => {
        const r = await play(PLAY_ROLE);
        equal(r.code, 0, r.text);
        equal(recap(r.text).changed, 1, r.text);
        equal(await hostname(), "ansible-one");
        const f = JSON.parse(await Deno.readTextFile(facts));
        const version = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).version;
        equal(f.version.version, version);
        equal(f.machine_status.ready, true);
        equal(f.config_sha256.length, 64);
      });

      await t.step("a second run changes nothing", async () => {
        const r = await play(PLAY_ROLE);
        equal(r.code, 0, r.text);
        equal(recap(r.text).changed, 0, r.text);
      });

      await t.step("secrets are generated once", async () => {
        const first = await play(PLAY_SECRETS);
        equal(recap(first.text).changed, 1, first.text);
        const again = await play(PLAY_SECRETS);
        equal(recap(again.text).changed, 0, again.text);
        const modes = [];
        for (const f of ["secrets.yaml", "machinectl.yaml", "machine.yaml"]) {
          modes.push((await Deno.stat(join(dir, "other", f))).mode! & 0o777);
        }
        deepEqual(modes, [0o600, 0o600, 0o600]);
      });

      await t.step("ansible-doc renders every module's and the role's documentation", async () => {
        const modules = ["facts", "config", "power", "upgrade", "reset", "secrets"];
        for (const m of modules) {
          const r = await ansible("ansible-doc", [`machined.fleet.machined_${m}`], env);
          equal(r.code, 0, `${m}: ${r.text}`);
          ok(!/WARNING|ERROR/.test(r.text), `${m}: ${r.text}`);
        }
        const role = await ansible("ansible-doc", ["-t", "role", "machined.fleet.node"], env);
        equal(role.code, 0, role.text);
      });

      await t.step(
        "the playbooks in docs/playbooks parse against the installed collection",
        async () => {
          for (const f of ["rolling_upgrade.yml", "adopt_maintenance.yml"]) {
            const r = await ansible("ansible-playbook", [
              "-i",
              inventory,
              "--syntax-check",
              join(ROOT, "docs", "playbooks", f),
            ], env);
            equal(r.code, 0, `${f}: ${r.text}`);
          }
        },
      );

      await t.step(
        "an upgrade streams over HTTP/1.1 and fails with the node's code and reason",
        async () => {
          // Dev mode has no A/B slots: the node refuses, through the edge, after the stream.
          await Deno.writeFile(join(dir, "fake.bundle"), new Uint8Array(3 * 1024 * 1024 + 7));
          const r = await play(PLAY_UPGRADE);
          equal(recap(r.text).failed, 1, r.text);
          match(r.text, /"code": "unimplemented"/);
          match(r.text, /Upgrade is not available on this machined/);
        },
      );

      await t.step("a client config kept in Ansible Vault is used and never logged", async () => {
        const text = await Deno.readTextFile(join(state, "machinectl.yaml"));
        await Deno.writeTextFile(join(dir, "vaulted.yaml"), text);
        await Deno.writeTextFile(join(dir, "vault-pass"), "test-only-password\n");
        const enc = await ansible("ansible-vault", [
          "encrypt",
          join(dir, "vaulted.yaml"),
          "--vault-password-file",
          join(dir, "vault-pass"),
        ]);
        equal(enc.code, 0, enc.text);
        ok((await Deno.readTextFile(join(dir, "vaulted.yaml"))).startsWith("$ANSIBLE_VAULT"));
        const r = await play(PLAY_VAULT, "-vvv", "--vault-password-file", join(dir, "vault-pass"));
        equal(r.code, 0, r.text);
        const doc = parse(text);
        const key = doc.contexts[doc.context].key as string;
        ok(!r.text.includes(key.slice(20, 60)), "the client key shows in -vvv output");
        match(r.text, /NOT_LOGGING_PARAMETER|VALUE_SPECIFIED_IN_NO_LOG_PARAMETER/);
      });

      await t.step(
        "a client certificate of another CA fails the play with the node's TLS alert",
        async () => {
          const mine = parse(await Deno.readTextFile(join(state, "machinectl.yaml")));
          const other = parse(await Deno.readTextFile(join(dir, "other", "machinectl.yaml")));
          const ctx = other.contexts[other.context];
          ctx.ca = mine.contexts[mine.context].ca; // trusts the node, presents a stranger's certificate
          await Deno.writeTextFile(join(dir, "wrong.yaml"), stringify(other));
          const r = await play(PLAY_FACTS);
          ok(r.code !== 0, r.text);
          equal(recap(r.text).failed, 1, r.text);
          match(r.text, /TLS alert unknown_ca/);
          match(r.text, /"tls_alert": "unknown_ca"/);
        },
      );

      // Last: dev mode's Shutdown stops machined, and its API with it.
      await t.step(
        "machined_power shuts the node down and waits until its API is gone",
        async () => {
          const r = await play(PLAY_SHUTDOWN);
          equal(r.code, 0, r.text);
          equal(recap(r.text).changed, 1, r.text);
          match(r.text, /"seconds": \d/);
          equal((await node.status).code, 0);
          ok(node.exited());
        },
      );
    } finally {
      await node.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
