/**
 * Whether the node is in maintenance mode, as the API's two ends check it:
 * api/host/api_pki.ts says when apid serves with the self-signed maintenance
 * certificate, and ApplyConfiguration from a caller without a client
 * certificate goes through {@link NodeMaintenanceGate.apply}, one at a time.
 * The first config accepted that way shuts the gate at once (before the API
 * has even moved to the config's CA), so a maintenance node never takes a
 * second config without mutual TLS.
 *
 * @module
 */
import { InvalidArgumentError, PermissionDeniedError } from "../errors/mod.ts";
import type { MaintenanceGate } from "../server/mod.ts";
import { caSectionOf } from "./ca_source.ts";

/** The gate machined's API server consults; api_pki drives {@link serving}. */
export class NodeMaintenanceGate implements MaintenanceGate {
  #serving = false;
  #accepted = false;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #configInForce: () => boolean;

  /**
   * @param configInForce whether a valid config is in force (one found on
   *   STATE or CIDATA after boot shuts the gate before the API has moved)
   */
  constructor(configInForce: () => boolean = () => false) {
    this.#configInForce = configInForce;
  }

  /** True while apid serves maintenance mode and no config is in force or accepted through it. */
  get active(): boolean {
    return this.#serving && !this.#accepted && !this.#configInForce();
  }

  /**
   * Insecure applies wait for `settled` (at most `maxMs`) before they are
   * judged: at boot, until STATE has been looked for on the disks, so a node
   * that has a config there never takes another one in the meantime.
   */
  holdUntil(settled: Promise<unknown>, maxMs = 120_000): void {
    const bounded = Promise.race([
      settled.catch(() => {}),
      new Promise((r) => setTimeout(r, maxMs)),
    ]);
    this.#chain = this.#chain.then(() => bounded);
  }

  /** Whether a config was accepted without mutual TLS (the gate is shut). */
  get accepted(): boolean {
    return this.#accepted;
  }

  /** api_pki: apid now serves (true) or no longer serves (false) maintenance mode. */
  set serving(value: boolean) {
    this.#serving = value;
  }

  /**
   * api_pki: the accepted config's CA could not be used, so the node is still
   * in maintenance with no CA anyone holds; let another config in.
   */
  reopen(): void {
    this.#accepted = false;
  }

  apply<T>(configYaml: string, dryRun: boolean, run: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(async () => {
      if (!this.active) {
        throw new PermissionDeniedError(
          "the node already has a config: apply another one with mutual TLS",
          { context: { dryRun } },
        );
      }
      if (!caSectionOf(configYaml)) {
        throw new InvalidArgumentError(
          "a config applied in maintenance mode must carry a valid machine.ca " +
            "(machinectl gen config writes one): without it nobody could reach the node afterwards",
          { context: { dryRun } },
        );
      }
      const result = await run();
      if (!dryRun) this.#accepted = true;
      return result;
    });
    this.#chain = next.catch(() => {});
    return next;
  }
}
