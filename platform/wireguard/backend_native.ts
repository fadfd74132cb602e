/**
 * WgWireguardBackend: Debian's `wg` (wireguard-tools), started through the
 * process backend. The settings, secrets included, are written to a private
 * file (mode 0600 in a 0700 directory, removed as soon as `wg` has read it)
 * and applied with `wg syncconf <if> FILE`, which changes only what differs,
 * so peers that stay keep their sessions. Keys never reach argv or the
 * environment. Status is `wg show <if> dump`, whose secret columns
 * wg_text.ts drops on parsing; its stdout is never logged. `wg` reaches a
 * kernel device over generic netlink and a userspace one (wireguard-go) over
 * its UAPI socket, so both work. docs/decisions.md says why `wg` and not
 * genetlink in Rust.
 * @module
 */
import { collectRun, type ProcessBackend, TOOL_PATH } from "../process/mod.ts";
import {
  type WireguardBackend,
  type WireguardDeviceSettings,
  type WireguardDeviceState,
  WireguardError,
} from "./backend.ts";
import { configText, parseDump } from "./wg_text.ts";

/** Where the settings file lives for the moment `wg` reads it. */
export const WG_STATE_DIR = "/run/machined/wireguard";
/** How long one `wg` run may take before it is killed. */
export const WG_TIMEOUT_MS = 10_000;
/** The most of `wg`'s output read (a dump of a few thousand peers). */
const MAX_OUTPUT_BYTES = 4 << 20;

/** Options of {@link WgWireguardBackend}. */
export interface WgOptions {
  process: ProcessBackend;
  /** @default WG_STATE_DIR */
  stateDir?: string;
  /** @default "wg" (on /usr/bin) */
  wg?: string;
  /** @default WG_TIMEOUT_MS */
  timeoutMs?: number;
}

/** The real backend. */
export class WgWireguardBackend implements WireguardBackend {
  readonly #o: Required<WgOptions>;

  constructor(options: WgOptions) {
    this.#o = { stateDir: WG_STATE_DIR, wg: "wg", timeoutMs: WG_TIMEOUT_MS, ...options };
  }

  async configure(device: string, settings: WireguardDeviceSettings): Promise<void> {
    await Deno.mkdir(this.#o.stateDir, { recursive: true, mode: 0o700 });
    await Deno.chmod(this.#o.stateDir, 0o700);
    const file = `${this.#o.stateDir}/${device}.conf`;
    await Deno.remove(file).catch(() => {});
    try {
      await Deno.writeTextFile(file, configText(settings), { mode: 0o600, createNew: true });
      const r = await this.#run(["syncconf", device, file]);
      if (r.code !== 0) {
        throw new WireguardError(device, "configure", r.code, scrubKeys(r.stderr, settings));
      }
    } finally {
      await Deno.remove(file).catch(() => {});
    }
  }

  async show(device: string): Promise<WireguardDeviceState | undefined> {
    const r = await this.#run(["show", device, "dump"]);
    if (r.code !== 0 && isAbsent(r.stderr)) return undefined;
    if (r.code !== 0) throw new WireguardError(device, "show", r.code, r.stderr);
    try {
      return parseDump(r.stdout);
    } catch (e) {
      throw new WireguardError(device, "show", r.code, (e as Error).message, { cause: e });
    }
  }

  async #run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const h = await this.#o.process.spawn({
      argv: [this.#o.wg, ...args],
      env: { PATH: TOOL_PATH },
    });
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      this.#o.process.signal({ pid: h.pid }, "SIGKILL").catch(() => {});
    }, this.#o.timeoutMs);
    try {
      const { stdout, stderr, exit } = await collectRun(h, MAX_OUTPUT_BYTES);
      return { code: killed ? null : exit.code, stdout, stderr };
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * `wg`'s stderr without the keys: it quotes a value it cannot parse (`Key is not the correct
 * length or format: \`...'`), which may be a secret.
 */
export function scrubKeys(stderr: string, s: WireguardDeviceSettings): string {
  let out = stderr.replace(/`[^'\n]*'/g, "`(redacted)'");
  for (const k of [s.privateKey, ...s.peers.map((p) => p.presharedKey ?? "")]) {
    if (k) out = out.replaceAll(k, "(redacted)");
  }
  return out;
}

/** `wg`'s words for a device that does not exist, or is no WireGuard device. */
function isAbsent(stderr: string): boolean {
  return /No such device|Protocol not supported|Operation not supported/.test(stderr);
}
