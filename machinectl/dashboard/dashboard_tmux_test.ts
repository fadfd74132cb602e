/**
 * `machinectl dashboard` as a person uses it: in a terminal (tmux, 120x40)
 * against a dev-mode node, read back with `capture-pane`. The screen shows
 * the node, follows a hostname change and a service restart, shows
 * "reconnecting…" while the node is down and the new boot once it is back on
 * the same port, lays itself out again when the terminal shrinks, and `q`
 * (or Ctrl-C) ends it with exit status 0 and the terminal restored.
 */
import { match, ok } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectToNode } from "../connection.ts";
import { freePort } from "../../dev/testing.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HAS_TMUX = (() => {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

/**
 * `promise`, or an error naming `what` after `ms`: every await in this test is
 * bounded, so a stall under `deno test --parallel` fails with the step that
 * stalled instead of hanging the run.
 */
function bounded<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * A private tmux server on a socket in the test's own directory, so nothing
 * else's sessions are touched and removing the directory leaves nothing behind.
 */
class Tmux {
  constructor(readonly socket: string) {}
  readonly session = "dash";

  async run(...args: string[]): Promise<string> {
    const out = await bounded(
      `tmux ${args[0]}`,
      new Deno.Command("tmux", {
        args: ["-S", this.socket, ...args],
        stdin: "null",
        signal: AbortSignal.timeout(15_000),
      }).output(),
      20_000,
    );
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      throw new Error(`tmux ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return text;
  }

  screen(): Promise<string> {
    return this.run("capture-pane", "-p", "-t", this.session);
  }

  /** Polls the screen (every 200 ms, at most `ms`) until `check` holds; returns it. */
  async waitFor(what: string, check: (screen: string) => boolean, ms = 45_000): Promise<string> {
    const deadline = performance.now() + ms;
    let screen = "";
    while (performance.now() < deadline) {
      screen = await this.screen();
      if (check(screen)) return screen;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the dashboard did not show ${what} within ${ms} ms; screen:\n${screen}`);
  }

  async kill(): Promise<void> {
    await this.run("kill-session", "-t", this.session).catch(() => {});
  }
}

/** A dev-mode node on a fixed port and state dir, so a second one is "the same node rebooted". */
async function startDevNode(state: string, port: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "dev",
      "--state",
      state,
      "--listen",
      `127.0.0.1:${port}`,
    ],
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = performance.now() + 90_000;
  while (!/API on 127\.0\.0\.1:\d+/.test(text)) {
    const left = Math.max(1, deadline - performance.now());
    const { value, done } = await bounded("dev mode's output", reader.read(), left)
      .catch(() => ({ value: "", done: true }));
    if (done || performance.now() > deadline) {
      child.kill("SIGKILL");
      await bounded("dev mode's exit after SIGKILL", child.status, 10_000);
      throw new Error(`dev mode did not come up; output:\n${text}`);
    }
    text += value;
  }
  const drained = (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return {
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const exited = await bounded("dev mode's exit after SIGTERM", child.status, 30_000)
        .then(() => true, () => false);
      if (!exited) {
        try {
          child.kill("SIGKILL");
        } catch { /* gone meanwhile */ }
        await bounded("dev mode's exit after SIGKILL", child.status, 10_000);
      }
      await bounded("dev mode's output closing", drained, 10_000);
    },
  };
}

Deno.test({
  name: "machinectl dashboard in tmux: node, updates, a reboot followed, q quits" +
    (HAS_TMUX ? "" : " (needs tmux)"),
  ignore: !HAS_TMUX,
  async fn() {
    const state = await Deno.makeTempDir({ prefix: "machined-dash-" });
    const port = freePort();
    const tmux = new Tmux(join(state, "tmux.sock"));
    let node = await startDevNode(state, port);
    try {
      const config = join(state, "machinectl.yaml");
      // The shell tmux runs reports how the dashboard ended, as a person would see it. (Asking
      // tmux for the pane's exit status proved unreliable: it sometimes never reaped the pane.)
      const cmd = (run: string) =>
        `${Deno.execPath()} run -A ${join(ROOT, "machinectl/main.ts")} --config ${config} ` +
        `dashboard; echo "dashboard ${run} exited with status $?"; exec sleep 600`;
      await tmux.run("new-session", "-d", "-s", tmux.session, "-x", "120", "-y", "40", cmd("one"));

      let screen = await tmux.waitFor(
        "the node",
        (s) =>
          /^machined-dev {2}127\.0\.0\.1:\d+/m.test(s) && /^stage running {3}ready/m.test(s) &&
          /^ {2}payload +running +ok +0 +\d+/m.test(s) && /phase +machine +running/.test(s) &&
          /^CPU .*% +load [\d.]+ +\d+ cores( [▁-█]+)?$/m.test(s) &&
          /^─ LOGS \(machined\) ─+\n(.|\n)*apid: ready/m.test(s),
      );
      const pid = /^ {2}payload +running +ok +\d+ +(\d+)/m.exec(screen)![1];
      match(screen, /^connected since \d\d:\d\d:\d\d$/m);
      match(screen, /^MEM .*% {2}[\d.]+ [KMG]iB \/ [\d.]+ [KMG]iB$/m);

      // Things change on the node: the screen follows from the streams.
      {
        using conn = await bounded("connecting", connectToNode({ config }), 30_000);
        const text = await Deno.readTextFile(join(state, "config.yaml"));
        const call = { timeoutMs: 30_000 };
        await conn.client.applyConfiguration({
          configYaml: text.replace(/hostname: .*/, 'hostname: "dash-renamed"'),
        }, call);
        await conn.client.serviceRestart({ id: "payload" }, call);
      }
      screen = await tmux.waitFor(
        "the new hostname and the restarted payload",
        (s) =>
          /^dash-renamed {2}127\.0\.0\.1/m.test(s) &&
          /hostname is now dash-renamed/.test(s) &&
          new RegExp(`^ {2}payload +running +ok +\\d+ +(?!${pid} )\\d+`, "m").test(s),
        30_000,
      );

      // The node goes down: the last state stays, marked, and the dashboard retries.
      await node.stop();
      screen = await tmux.waitFor("reconnecting", (s) => /^reconnecting… \(attempt \d+/m.test(s));
      match(screen, /^stage \w+ \(last seen\)/m);

      // The same node comes back (same port, same state dir): a new boot, history reset.
      node = await startDevNode(state, port);
      screen = await tmux.waitFor(
        "the new boot",
        (s) =>
          /^connected since \d\d:\d\d:\d\d {3}rebooted at \d\d:\d\d:\d\d$/m.test(s) &&
          /^stage running {3}ready/m.test(s) && /^ {2}payload +running/m.test(s) &&
          /api +apid +ready/.test(s),
      );
      const apidReady = screen.match(/api +apid +ready/g) ?? [];
      ok(apidReady.length === 1, `only the new boot's events are shown:\n${screen}`);

      // A smaller terminal: the screen is laid out again for it (SIGWINCH).
      await tmux.run("resize-window", "-t", tmux.session, "-x", "80", "-y", "24");
      screen = await tmux.waitFor(
        "the layout for 80x24",
        (s) => /^─ SERVICES ─{69}$/m.test(s) && s.split("\n").every((l) => [...l].length <= 80),
        10_000,
      );

      await tmux.run("send-keys", "-t", tmux.session, "q");
      let after = await tmux.waitFor("the exit after q", (s) => /dashboard one exited/.test(s));
      match(after, /^dashboard one exited with status 0$/m);
      // The alternate screen is left: what the terminal showed before is back.
      ok(!after.includes("─ SERVICES"), `the terminal is restored:\n${after}`);

      // Ctrl-C quits as well (raw mode: it arrives as a key, not as SIGINT).
      await tmux.run("respawn-pane", "-k", "-t", tmux.session, cmd("two"));
      await tmux.waitFor("the dashboard again", (s) => /^stage running {3}ready/m.test(s));
      await tmux.run("send-keys", "-t", tmux.session, "C-c");
      after = await tmux.waitFor("the exit after Ctrl-C", (s) => /dashboard two exited/.test(s));
      match(after, /^dashboard two exited with status 0$/m);
    } finally {
      await tmux.kill();
      await node.stop();
      await Deno.remove(state, { recursive: true });
    }
  },
});
