/**
 * Keeps the text of the config in force (the store holds the parsed config with
 * its secrets redacted), applies new texts, and persists the accepted one on
 * STATE once STATE is mounted. On a later boot the config on STATE wins over
 * the image's: it is what the node last accepted (for example over the API).
 */
import { join } from "node:path";
import { writeFileAtomic } from "../../pki/mod.ts";
import { type MachineConfig, parseMachineConfig } from "../mod.ts";
import { applyConfigText, type ConfigLoad } from "./config_loader.ts";
import type { Machined } from "../../core/mod.ts";

/** The config text in force and where it lives. */
export class ConfigKeeper {
  #text?: string;
  #config?: MachineConfig;
  #rejected?: string;
  #stateText?: string;
  #stateDir?: string;
  #listeners = new Set<() => void | Promise<void>>();

  constructor(readonly machined: Machined) {}

  /** The accepted config text, if any. */
  get text(): string | undefined {
    return this.#text;
  }

  /** The config in force, secrets included (the store's copy is redacted). */
  get config(): MachineConfig | undefined {
    return this.#config;
  }

  /** The invalid text the node booted with, while no valid config is in force. */
  get rejectedText(): string | undefined {
    return this.#config ? undefined : this.#rejected;
  }

  /** The config text persisted on STATE (the last good one), once STATE is mounted. */
  get stateText(): string | undefined {
    return this.#stateText;
  }

  /**
   * Calls `listener` after the config in force, the rejected text or the
   * STATE copy changed (api/host/api_pki.ts follows the CA this way); returns an
   * unsubscribe function.
   */
  onChange(listener: () => void | Promise<void>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Validates and applies `text`. A valid config replaces the one in force, is
   * persisted on STATE when mounted, and moves a node in maintenance to running.
   * An invalid one changes nothing but ConfigStatus (nothing at all with
   * `recordInvalid: false`, for callers that get the errors back). `dryRun` only validates.
   * `publicSource` names a place every process can read (the kernel command
   * line): a config there holding the CA key is refused.
   */
  async apply(
    text: string,
    source: string,
    options: {
      dryRun?: boolean;
      recordInvalid?: boolean;
      publicSource?: string;
      /** Write it to STATE (false for a `try`, which must never be persisted). @default true */
      persist?: boolean;
    } = {},
  ): Promise<ConfigLoad> {
    if (options.dryRun || options.recordInvalid === false) {
      const r = parseMachineConfig(text, source);
      if (!r.ok) return { state: "invalid", errors: r.errors };
      if (options.dryRun) return { state: "valid", config: r.config };
    }
    const r = await applyConfigText(this.machined.store, text, source, options);
    if (r.state !== "valid") {
      // A config refused for a leaked CA key never lends its CA (api/host/ca_source.ts).
      if (r.state === "invalid" && !options.publicSource) {
        this.#rejected = text;
        await this.#changed();
      }
      return r;
    }
    this.#text = text;
    this.#config = r.config;
    if (options.persist !== false) await this.#persist();
    if (this.machined.stage.get() === "maintenance") this.machined.stage.set("running");
    await this.#changed();
    return r;
  }

  /** Records a text accepted at boot (already in the store). */
  accepted(text: string): void {
    this.#text = text;
  }

  /**
   * STATE was mounted at `dir`: load its config if it differs from the one in
   * force (it is newer), else store the one in force there.
   */
  async stateMounted(dir: string): Promise<void> {
    this.#stateDir = dir;
    const path = join(dir, "config.yaml");
    let onState: string | undefined;
    try {
      onState = await Deno.readTextFile(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    this.#stateText = onState;
    if (onState !== undefined && onState !== this.#text) {
      const r = await this.apply(onState, path);
      if (r.state === "valid") {
        this.machined.logger.info("config", `loaded the config persisted on STATE (${path})`);
        return;
      }
      this.machined.logger.warn(
        "config",
        `the config on STATE is invalid; keeping the one in force`,
      );
    }
    await this.#persist();
    await this.#changed();
  }

  /** Whether STATE is mounted, so that a config can be persisted for the next boot. */
  get canPersist(): boolean {
    return this.#stateDir !== undefined;
  }

  /**
   * Persists `text` (already validated) on STATE for the next boot without
   * putting it in force: a `staged` or `reboot` apply.
   * @throws Error when STATE is not mounted
   */
  async stage(text: string): Promise<void> {
    if (!this.#stateDir) throw new Error("Cannot stage a config: STATE is not mounted");
    await this.#write(text);
    await this.#changed();
  }

  /** Persists the config in force (a confirmed `try`). */
  async persistRunning(): Promise<void> {
    await this.#persist();
    await this.#changed();
  }

  async #persist(): Promise<void> {
    if (!this.#stateDir || this.#text === undefined) return;
    await this.#write(this.#text);
  }

  async #write(text: string): Promise<void> {
    await writeFileAtomic(join(this.#stateDir!, "config.yaml"), text, { mode: 0o600 });
    this.#stateText = text;
    this.machined.logger.info("config", "config persisted on STATE");
  }

  async #changed(): Promise<void> {
    for (const l of this.#listeners) {
      try {
        await l();
      } catch (e) {
        this.machined.logger.error("config", "a config listener failed", { error: e });
      }
    }
  }
}
