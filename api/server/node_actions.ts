/**
 * What the API asks of the node beyond the store: power actions and version
 * facts. The integrator implements it in machined; tests use a recording one.
 */

/** Facts returned by the Version RPC. */
export interface VersionInfo {
  readonly version: string;
  readonly commit: string;
  readonly denoVersion: string;
  readonly os: string;
  readonly arch: string;
  readonly hostname: string;
}

/** Who asked for an action, for the event log. */
export interface ActionRequester {
  readonly name: string;
  readonly role: string;
}

/**
 * Node actions. `reboot` and `shutdown` resolve once the action is *accepted*
 * and must perform it after returning (so the reply reaches the client);
 * calling one while another is under way is idempotent.
 */
export interface NodeActions {
  version(): VersionInfo | Promise<VersionInfo>;
  reboot(by: ActionRequester): Promise<void>;
  shutdown(by: ActionRequester): Promise<void>;
}
