/**
 * Where a node's machine config comes from, in order (docs/install.md):
 *
 * 1. `machined.config.b64=` on the kernel command line (inline; no CA key);
 * 2. the config persisted on STATE (what the node last accepted);
 * 3. `machined.config=PATH` (a file);
 * 4. the image's `/etc/machined/config.yaml`;
 * 5. a NoCloud config drive: a FAT or ISO9660 volume labelled `CIDATA` with a
 *    `user-data` file;
 * 6. `machined.config=http(s)://…`, fetched once the network is up, with
 *    retries; `machined.config.sha256=<hex>` pins its content, and plain HTTP
 *    is accepted only when pinned;
 * 7. none: maintenance mode, waiting for `machinectl apply-config --insecure`.
 *
 * 1–4 are read at boot (layout/cmdline.ts's configCandidates). STATE is only
 * mounted once a config names its disk, so without a config at boot it is
 * looked for on the disks (a partition machined made, role `state`) and its
 * `config.yaml` read read-only, before 5 and 6. 5 and 6 need
 * devices and the network, so config/keeper/late_config.ts tries them after machined
 * has started, and only while no config is in force. A config applied over
 * the API at any time wins over what is still pending.
 *
 * @module
 */

/** A source tried once disks and the network are up. */
export type LateConfigSource =
  | { readonly kind: "state"; readonly file: "config.yaml" }
  | { readonly kind: "cidata"; readonly label: "CIDATA"; readonly file: "user-data" }
  | { readonly kind: "url"; readonly url: string; readonly sha256?: string };

/** The plan for the sources after boot, or why the URL cannot be used. */
export interface LateConfigPlan {
  readonly sources: readonly LateConfigSource[];
  /** `machined.config=` was a URL that may not be used as given (the reason). */
  readonly refused?: string;
}

/**
 * STATE found on a disk without a config: STATE is only mounted once a config
 * names the install disk, so a node that took its config over the API (a
 * generic image) finds it after a reboot by reading STATE's `config.yaml`
 * read-only first (tried before anything else, as the order says).
 */
export const STATE_SOURCE: LateConfigSource = { kind: "state", file: "config.yaml" };

/** The CIDATA source (always tried when nothing was found at boot). */
export const CIDATA_SOURCE: LateConfigSource = {
  kind: "cidata",
  label: "CIDATA",
  file: "user-data",
};

/** Whether `machined.config=` names a URL rather than a path. */
export function isConfigUrl(value: string | undefined): boolean {
  return value !== undefined && /^https?:\/\//i.test(value);
}

/**
 * The late sources, in order: STATE on a disk, CIDATA, then the command line's URL. Pure.
 * A plain-HTTP URL without `machined.config.sha256` is refused (anyone on the
 * path could change it); a malformed pin is refused.
 */
export function lateConfigPlan(cmdline: ReadonlyMap<string, string>): LateConfigPlan {
  const value = cmdline.get("machined.config");
  if (!isConfigUrl(value)) return { sources: [STATE_SOURCE, CIDATA_SOURCE] };
  const pin = cmdline.get("machined.config.sha256");
  if (pin !== undefined && !/^[0-9a-f]{64}$/i.test(pin)) {
    return {
      sources: [STATE_SOURCE, CIDATA_SOURCE],
      refused: `machined.config.sha256="${pin}" is not 64 hex digits; ${value} is not fetched`,
    };
  }
  if (/^http:/i.test(value!) && pin === undefined) {
    return {
      sources: [STATE_SOURCE, CIDATA_SOURCE],
      refused: `${value} is plain HTTP: it is fetched only with machined.config.sha256=<hex> ` +
        `pinning its content`,
    };
  }
  const url: LateConfigSource = pin === undefined
    ? { kind: "url", url: value! }
    : { kind: "url", url: value!, sha256: pin.toLowerCase() };
  return { sources: [STATE_SOURCE, CIDATA_SOURCE, url] };
}
