/**
 * Privileged: the API's PKI with a real apid process, as a node runs it
 * (node/testdata/api_pki_harness.ts: api/host/api_pki.ts + startApiHost + the
 * native process backend + machined-edge).
 *
 * 1. apid runs as machined-api (uid/gid 50000, no groups, no capabilities,
 *    under the `default` seccomp filter), and a process with exactly those credentials cannot open any file that
 *    holds the CA key (EACCES), while it can read apid's own files.
 * 2. In a network namespace joined to another by a veth pair, the address the
 *    node gets after boot ends up in the server certificate, and machinectl
 *    (its own connection code, full name verification) reaches the node at
 *    that address from the other namespace; before the re-issue it is refused
 *    on the name.
 *
 * Needs root (setuid to apid's user, network namespaces) and the native addon.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { renderConfigTemplate } from "../../config/mod.ts";
import { NATIVE_ADDON_PATH } from "../../native-ops/mod.ts";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  generateClientConfig,
  writeClientConfig,
} from "../../pki/mod.ts";
import { APID_GID, APID_UID, edgeBinaryPath } from "../edge/mod.ts";
import { createMachineClient } from "../client/mod.ts";
import { jsonLineReader } from "../testing_json_lines.ts";
import type { HarnessOptions } from "../../node/testdata/api_pki_harness.ts";

const root = Deno.uid() === 0;
const haveAddon = await Deno.stat(NATIVE_ADDON_PATH).then(() => true, () => false);
const why = !root ? "needs root" : !haveAddon ? "needs the native addon" : "";
const decoder = new TextDecoder();

type HarnessLine = {
  harness: string;
  action?: string;
  message?: string;
  pid?: string;
  sans?: string;
};

/** A root laid out like a node: etc/config.yaml (0600), the bundled apid, its DENO_DIR. */
async function nodeRoot(ca: CertificateAuthority): Promise<{ dir: string; apid: string }> {
  const dir = await Deno.makeTempDir({ prefix: "machined-pki-root-" });
  await Deno.chmod(dir, 0o755); // apid's user must traverse to run/machined/apid-pki
  await Deno.mkdir(join(dir, "etc"), { mode: 0o755 });
  await Deno.writeTextFile(
    join(dir, "etc", "config.yaml"),
    renderConfigTemplate({ hostname: "node-1", ca: { certPem: ca.certPem, keyPem: ca.keyPem } }),
    { mode: 0o600 },
  );
  // machined-edge where apid's user can reach it (a checkout under /root is not).
  const apidDir = join(dir, "apid");
  await Deno.mkdir(apidDir, { recursive: true, mode: 0o755 });
  await Deno.copyFile(edgeBinaryPath(), join(apidDir, "machined-edge"));
  await Deno.chmod(join(apidDir, "machined-edge"), 0o755);
  return { dir, apid: join(apidDir, "machined-edge") };
}

function startHarness(o: HarnessOptions, netns?: string) {
  const harness = new URL("../../node/testdata/api_pki_harness.ts", import.meta.url).pathname;
  const argv = [Deno.execPath(), "run", "-A", harness, JSON.stringify(o)];
  const child = new Deno.Command(netns ? "ip" : argv[0], {
    args: netns ? ["netns", "exec", netns, ...argv] : argv.slice(1),
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const next = jsonLineReader<HarnessLine>(child.stdout, "the harness");
  const seen: HarnessLine[] = [];
  let pending: Promise<HarnessLine> | undefined;
  const waitFor = async (action: string, ms = 60_000): Promise<HarnessLine> => {
    const deadline = performance.now() + ms;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no "${action}" from the harness within ${ms} ms`);
      pending ??= next();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const line = await Promise.race([
        pending,
        new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), left))),
      ]);
      clearTimeout(timer);
      if (!line) continue;
      pending = undefined;
      seen.push(line);
      if (line.action === action || line.harness === action) return line;
    }
  };
  return {
    child,
    waitFor,
    seen,
    async stop() {
      child.kill("SIGTERM");
      await waitFor("stopped", 20_000).catch(() => child.kill("SIGKILL"));
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}

async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) found.push(...await filesHolding(path, needle));
    else if (e.isFile && (await Deno.readTextFile(path).catch(() => "")).includes(needle)) {
      found.push(path);
    }
  }
  return found;
}

function statusLines(text: string): Record<string, string> {
  const want = ["Uid", "Gid", "Groups", "CapEff", "CapPrm", "NoNewPrivs", "Seccomp"];
  return Object.fromEntries(
    text.split("\n").map((l) => l.split(":\t")).filter(([k]) => want.includes(k))
      .map(([k, v]) => [k, v.trim()]),
  );
}

async function asApid(...args: string[]) {
  const r = await new Deno.Command(args[0], {
    args: args.slice(1),
    uid: APID_UID,
    gid: APID_GID,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { ok: r.success, out: decoder.decode(r.stdout), err: decoder.decode(r.stderr) };
}

Deno.test({
  name: `apid's process cannot open any file holding the CA key${why ? ` (${why})` : ""}`,
  ignore: !!why,
  async fn() {
    const ca = await createCertificateAuthority();
    const { dir, apid } = await nodeRoot(ca);
    const h = startHarness({
      root: dir,
      listen: "127.0.0.1:0",
      dropUser: true,
      edgeBinary: apid,
      watchAddresses: false,
      debounceMs: 100,
    });
    try {
      const ready = await h.waitFor("ready");
      const pid = Number(ready.pid);
      const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
      assert.match(cmdline, /machined-edge/, "the pid is apid's");
      const creds = statusLines(await Deno.readTextFile(`/proc/${pid}/status`));
      assert.match(creds.Uid, /^50000\s+50000\s+50000\s+50000$/);
      assert.match(creds.Gid, /^50000\s+50000\s+50000\s+50000$/);
      assert.equal(creds.Groups, "", "apid has no supplementary groups");
      assert.equal(creds.CapEff, "0000000000000000");
      assert.equal(creds.NoNewPrivs, "1");
      // machined's own service is under the `default` seccomp filter (mode 2), as its spec asks.
      assert.equal(creds.Seccomp, "2", "apid runs under a seccomp filter");
      // The checker runs with exactly apid's credentials.
      const mine = statusLines((await asApid("cat", "/proc/self/status")).out);
      for (const k of ["Uid", "Gid", "Groups", "CapEff"]) assert.equal(mine[k], creds[k], k);

      // One line of the key's base64 finds it in PEM files and in YAML blocks alike.
      const keyBody = ca.keyPem.trim().split("\n")[1];
      const holders = await filesHolding(dir, keyBody);
      const pkiDir = join(dir, "run", "machined", "pki");
      assert.ok(holders.includes(join(pkiDir, "ca.key")), holders.join(", "));
      assert.ok(holders.includes(join(dir, "etc", "config.yaml")), holders.join(", "));
      assert.ok(!holders.some((p) => p.includes("apid-pki")), "apid's directory holds no CA key");
      assert.equal((await Deno.stat(pkiDir)).mode! & 0o777, 0o700);
      assert.equal((await Deno.stat(pkiDir)).uid, 0);
      for (const path of holders) {
        const r = await asApid("head", "-c", "1", path);
        assert.ok(!r.ok, `apid's user read ${path}`);
        assert.match(r.err, /Permission denied/, `${path}: EACCES`);
      }
      // Not vacuous: the same credentials read apid's own files.
      for (const name of ["ca.crt", "server.crt", "server.key"]) {
        const r = await asApid("head", "-c", "1", join(dir, "run", "machined", "apid-pki", name));
        assert.ok(r.ok, `${name}: ${r.err}`);
      }
      // And that apid serves mTLS with the config's CA.
      const port = Number(/listening on port (\d+)/.exec(ready.message ?? "")?.[1]);
      assert.ok(port > 0, JSON.stringify(ready));
      const client = await generateClientConfig({
        secrets: { ca },
        role: "os:reader",
        name: "r",
        endpoints: [`127.0.0.1:${port}`],
      });
      const ctx = client.contexts[client.context!];
      const c = createMachineClient({
        endpoint: `127.0.0.1:${port}`,
        caPem: atob(ctx.ca),
        certPem: atob(ctx.crt),
        keyPem: atob(ctx.key),
      });
      try {
        assert.ok((await c.api.version({})).version);
      } finally {
        c.close();
      }
    } finally {
      await h.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

async function ip(...args: string[]): Promise<void> {
  const out = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`ip ${args.join(" ")}: ${decoder.decode(out.stderr).trim()}`);
}

async function machinectlIn(netns: string, config: string, ...argv: string[]) {
  const main = new URL("../../machinectl/main.ts", import.meta.url).pathname;
  const r = await new Deno.Command("ip", {
    args: ["netns", "exec", netns, Deno.execPath(), "run", "-A", main, "--config", config, ...argv],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  return { code: r.code, out: decoder.decode(r.stdout), err: decoder.decode(r.stderr) };
}

Deno.test({
  name: `machinectl reaches the node at an address it got after boot, names verified${
    why ? ` (${why})` : ""
  }`,
  ignore: !!why,
  async fn() {
    const tag = crypto.randomUUID().slice(0, 6);
    const node = `machined-pn-${tag}`, operator = `machined-po-${tag}`;
    const ca = await createCertificateAuthority();
    const { dir, apid } = await nodeRoot(ca);
    await ip("netns", "add", node);
    await ip("netns", "add", operator);
    let h: ReturnType<typeof startHarness> | undefined;
    try {
      await ip(
        "link",
        "add",
        "pn0",
        "netns",
        node,
        "type",
        "veth",
        "peer",
        "name",
        "po0",
        "netns",
        operator,
      );
      await ip("-n", operator, "addr", "add", "10.98.0.1/24", "dev", "po0");
      for (const [ns, link] of [[node, "pn0"], [operator, "po0"], [node, "lo"], [operator, "lo"]]) {
        await ip("-n", ns, "link", "set", link, "up");
      }
      const clientPath = join(dir, "machinectl.yaml");
      await writeClientConfig(
        clientPath,
        await generateClientConfig({
          secrets: { ca },
          role: "os:reader",
          name: "op",
          context: "node-1",
          endpoints: ["10.98.0.2:50000"],
        }),
      );
      // The address is there before machined's controllers have reported it,
      // as a DHCP lease is: the first certificate cannot name it.
      await ip("-n", node, "addr", "add", "10.98.0.2/24", "dev", "pn0");
      h = startHarness({
        root: dir,
        listen: "0.0.0.0:50000",
        dropUser: true,
        edgeBinary: apid,
        watchAddresses: true,
        debounceMs: 1_000,
        startOnSigusr1: true, // the address controller reports 10.98.0.2 after the first dial
      }, node);
      await h.waitFor("ready");
      const before = await machinectlIn(operator, clientPath, "get", "machinestatus");
      assert.ok(
        !h.seen.some((l) => l.action === "certificateReissued"),
        "the re-issue came before the first dial finished (machine too slow for this check)",
      );
      assert.notEqual(before.code, 0, before.out);
      // The probe's TLS stack (rustls) or node:tls (Node's) names the address.
      assert.match(
        before.err,
        /IP: 10\.98\.0\.2 is not in the cert's list|not valid for name "10\.98\.0\.2"/,
      );
      assert.match(before.err, /presented a certificate that does not name the address dialled/);

      h.child.kill("SIGUSR1");
      await h.waitFor("controllersStarted");

      const reissued = h.seen.find((l) => l.action === "certificateReissued") ??
        await h.waitFor("certificateReissued");
      const t0 = performance.now();
      assert.match(reissued.sans ?? "", /ip:10\.98\.0\.2(,|$)/);
      await h.waitFor("ready");
      const restartMs = Math.round(performance.now() - t0);
      console.log(
        JSON.stringify({ figure: "apid ready after certificate re-issue", ms: restartMs }),
      );
      const after = await machinectlIn(operator, clientPath, "get", "machinestatus");
      assert.equal(after.code, 0, after.err);
      assert.match(after.out, /MachineStatus/);
      const explicit = await machinectlIn(operator, clientPath, "-e", "10.98.0.2", "version");
      assert.equal(explicit.code, 0, explicit.err);
    } finally {
      await h?.stop();
      await ip("netns", "del", node).catch(() => {});
      await ip("netns", "del", operator).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});
