/**
 * ApplyConfiguration's modes over a {@link ConfigKeeper}: `no-reboot`
 * (persist and apply live; refused when a change needs a reboot), `reboot`
 * (persist, then reboot through the node's actions), `staged` (persist for
 * the next boot only), `auto` (no-reboot when it can, else reboot) and `try`
 * (apply in memory only; the config in force before it comes back at the
 * deadline unless confirmed: the persisted one, unless a staged config is
 * pending). A try is never written to STATE, so a reboot during one boots the
 * persisted config. Which changes need a reboot is
 * config/apply_class.ts; MachineConfig's `pending` shows a try or staged config.
 */
import {
  type ApplyClass,
  applyClassOf,
  configDiff,
  parseMachineConfig,
  rebootFields,
} from "../mod.ts";
import {
  type ActionRequester,
  ApplyRefusedError,
  type ConfigApplier,
  type ConfigApplyResult,
} from "../../api/server/mod.ts";
import type { ConfigPending } from "../../resources/mod.ts";
import type { ConfigKeeper } from "./config_keeper.ts";
import { checkBase, patchConfigText } from "./config_patch.ts";
import { setConfigPending, toIssue } from "./config_loader.ts";

/** The default and the bounds of a try's timeout. */
export const TRY_TIMEOUT_MS = { default: 60_000, min: 1_000, max: 86_400_000 } as const;

/** What the modes need besides the keeper. */
export interface ConfigModesDeps {
  /** Reboots the node (NodeActions.reboot: accepted now, done after the reply). */
  reboot?: (by: ActionRequester) => Promise<void>;
}

interface PendingTry {
  /** The config in force before the first try: what the deadline restores. */
  readonly base: string;
  readonly text: string;
  readonly changed: readonly string[];
  readonly deadline: string;
  readonly abort: AbortController;
}

/** The ConfigApplier of machined, with a try's timer and the pending record. */
export function configApplier(keeper: ConfigKeeper, deps: ConfigModesDeps = {}): ConfigApplier {
  return new ConfigModes(keeper, deps);
}

/** See the module doc. `dispose` stops a try's timer (tests, shutdown). */
export class ConfigModes implements ConfigApplier {
  #try?: PendingTry;

  constructor(readonly keeper: ConfigKeeper, readonly deps: ConfigModesDeps = {}) {
    keeper.onChange(() => this.#refresh());
  }

  async apply(
    text: string,
    o: Parameters<ConfigApplier["apply"]>[1],
  ): Promise<ConfigApplyResult> {
    // Checked before any await, so no other apply can land between the check and this one.
    checkBase(o.baseSha256, this.keeper.config);
    const parsed = parseMachineConfig(text, "api");
    if (!parsed.ok) return { state: "invalid", errors: parsed.errors.map(toIssue) };
    const running = this.keeper.config;
    const changed = running ? configDiff(running, parsed.config) : configDiff({}, parsed.config);
    // Nothing was set up from a config in maintenance: every change applies live.
    const reboot = running ? rebootFields(changed) : [];
    const mode = resolveMode(o.mode ?? "auto", reboot);
    const result: ConfigApplyResult = {
      state: "valid",
      errors: [],
      mode,
      changed,
      rebootFields: reboot,
      ...(running ? { current: running } : {}),
      requested: parsed.config,
    };
    // A dry run decides as the apply would, and says so instead of throwing.
    if (o.dryRun) return { ...result, ...this.#verdict(mode, changed, reboot, o.tryTimeoutMs) };
    this.#check(mode, changed, reboot, o.tryTimeoutMs);
    const by = o.by;
    if (mode === "try") {
      await this.#startTry(text, changed, o.tryTimeoutMs ?? TRY_TIMEOUT_MS.default);
    } else {
      this.#endTry();
      if (mode === "no-reboot") await this.#live(text);
      else await this.keeper.stage(text);
    }
    this.keeper.machined.events.emit(
      "config",
      "machine",
      "applied",
      `applied (${mode}) by ${by.name} (${by.role}); changed: ${changed.join(", ") || "nothing"}`,
    );
    if (mode === "reboot") await this.deps.reboot!(by);
    return result;
  }

  /**
   * Patches the config text in force (config_patch.ts) and applies the
   * result as {@link apply} does; the base check, the patch and the apply's
   * decision run without an await between them.
   */
  patch(
    patches: Parameters<ConfigApplier["patch"]>[0],
    o: Parameters<ConfigApplier["apply"]>[1],
  ): Promise<ConfigApplyResult> {
    try {
      checkBase(o.baseSha256, this.keeper.config);
      return this.apply(patchConfigText(this.keeper.text, patches), o);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async confirm(by: ActionRequester): Promise<ConfigApplyResult> {
    const t = this.#try;
    if (!t) throw new ApplyRefusedError("No try config is pending: nothing to confirm");
    this.#endTry();
    await this.keeper.persistRunning();
    this.keeper.machined.events.emit(
      "config",
      "machine",
      "confirmed",
      `try confirmed by ${by.name} (${by.role})`,
    );
    return { state: "valid", errors: [], mode: "try", changed: t.changed, rebootFields: [] };
  }

  /** Stops a pending try's timer without reverting. */
  dispose(): void {
    this.#try?.abort.abort();
  }

  /**
   * {@link #check} for a dry run: a refusal becomes `refusal`.
   * @throws RangeError for a try timeout out of bounds (a bad request, not a verdict)
   */
  #verdict(
    mode: string,
    changed: string[],
    reboot: string[],
    timeoutMs?: number,
  ): { refusal?: string } {
    try {
      this.#check(mode, changed, reboot, timeoutMs);
      return {};
    } catch (e) {
      if (e instanceof ApplyRefusedError) return { refusal: e.message };
      throw e;
    }
  }

  /** @throws ApplyRefusedError or RangeError when `mode` cannot apply this change now */
  #check(mode: string, changed: string[], reboot: string[], timeoutMs?: number): void {
    if ((mode === "no-reboot" || mode === "try") && reboot.length > 0) {
      throw new ApplyRefusedError(
        `Cannot apply with mode ${mode}: ${reboot.map((p) => describe(p)).join("; ")}`,
        changed,
        reboot,
      );
    }
    if ((mode === "staged" || mode === "reboot") && !this.keeper.canPersist) {
      throw new ApplyRefusedError(
        `Cannot apply with mode ${mode}: STATE is not mounted, so nothing persists across a reboot`,
        changed,
        reboot,
      );
    }
    if (mode === "reboot" && !this.deps.reboot) {
      throw new ApplyRefusedError("Cannot apply with mode reboot: this machined cannot reboot");
    }
    if (mode === "try" && this.keeper.config === undefined) {
      throw new ApplyRefusedError(
        "Cannot apply with mode try: no config is in force to revert to",
        changed,
      );
    }
    if (
      timeoutMs !== undefined && (timeoutMs < TRY_TIMEOUT_MS.min || timeoutMs > TRY_TIMEOUT_MS.max)
    ) {
      throw new RangeError(
        `try timeout ${timeoutMs} ms is outside ${TRY_TIMEOUT_MS.min}..${TRY_TIMEOUT_MS.max} ms`,
      );
    }
  }

  async #live(text: string, persist = true): Promise<void> {
    const r = await this.keeper.apply(text, "api", { recordInvalid: false, persist });
    if (r.state !== "valid") throw new Error(`The config validated but did not apply: ${r.state}`);
  }

  async #startTry(text: string, changed: string[], timeoutMs: number): Promise<void> {
    const base = this.#try?.base ?? this.keeper.text;
    this.#try?.abort.abort();
    const clock = this.keeper.machined.clock;
    const abort = new AbortController();
    const deadline = new Date(clock.now() + timeoutMs).toISOString();
    this.#try = { base: base!, text, changed, deadline, abort };
    await this.#live(text, false);
    clock.sleep(timeoutMs, abort.signal).then(
      () => this.#expire(abort),
      () => {}, // confirmed, replaced or disposed
    );
  }

  async #expire(abort: AbortController): Promise<void> {
    const t = this.#try;
    if (!t || t.abort !== abort) return;
    this.#try = undefined;
    const m = this.keeper.machined;
    try {
      await this.#live(t.base, false);
      m.events.emit(
        "config",
        "machine",
        "reverted",
        "the try config expired; back to the persisted one",
      );
      m.logger.info("config", "try expired: reverted to the persisted config");
    } catch (e) {
      m.logger.error("config", "cannot revert an expired try config", { error: e });
    }
  }

  #endTry(): void {
    this.#try?.abort.abort();
    this.#try = undefined;
  }

  #staged(): boolean {
    const k = this.keeper;
    return !this.#try && k.stateText !== undefined && k.text !== undefined &&
      k.stateText !== k.text;
  }

  /** Publishes MachineConfig's `pending` after any change of the keeper's. */
  async #refresh(): Promise<void> {
    const k = this.keeper;
    // Another writer (boot, the dev watcher) replaced the try config: the try is over.
    if (this.#try && k.text !== this.#try.text) this.#endTry();
    await setConfigPending(k.machined.store, this.#pending());
  }

  #pending(): ConfigPending | undefined {
    const t = this.#try;
    if (t) return { mode: "try", changed: t.changed, deadline: t.deadline };
    if (!this.#staged()) return undefined;
    const staged = parseMachineConfig(this.keeper.stateText!, "state");
    const running = this.keeper.config;
    return {
      mode: "staged",
      changed: staged.ok && running ? configDiff(running, staged.config) : [],
    };
  }
}

/** `auto` is no-reboot unless a change needs a reboot. */
export function resolveMode(
  mode: NonNullable<Parameters<ConfigApplier["apply"]>[1]["mode"]>,
  rebootFields: readonly string[],
): Exclude<typeof mode, "auto"> {
  if (mode !== "auto") return mode;
  return rebootFields.length > 0 ? "reboot" : "no-reboot";
}

function describe(path: string): string {
  const c: ApplyClass = applyClassOf(path);
  return "reboot" in c ? `${path} needs a reboot (${c.reboot})` : path;
}
