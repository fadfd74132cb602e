/**
 * What a rotation keeps between runs, in one file beside the client config
 * (`<config>.rotate-ca.yaml`, 0600): the new CA (its key included: until the
 * rotation switches a node, no machine config holds it), the admin client
 * credentials it issued from it, and the client credentials the rotation
 * started with, which reach a node that has not yet accepted the new CA. A
 * rotation that is cut resumes from this file; it is removed once the
 * rotation finishes.
 *
 * @module
 */
import { parse, stringify } from "yaml";
import * as v from "valibot";
import {
  type CertificateAuthority,
  type ClientCredentials,
  loadCertificateAuthority,
  pathExists,
  writeFileAtomic,
} from "../../pki/mod.ts";

/** PEM client credentials (a CA bundle the server must chain to, a certificate and its key). */
export interface PemCredentials {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** A rotation in progress. */
export interface RotationState {
  /** The client config's context the rotation runs for. */
  readonly context: string;
  /** The credentials the rotation started with (the old CA's). */
  readonly old: PemCredentials;
  /** The CA being rotated to. */
  readonly newCa: CertificateAuthority;
  /** Admin credentials from the new CA; `caPem` trusts the old and the new CA. */
  readonly next: PemCredentials;
}

const STATE_VERSION = "v1";
const Pem = v.pipe(v.string(), v.nonEmpty());
const Creds = v.object({ ca: Pem, crt: Pem, key: Pem });
const StateSchema = v.object({
  version: v.literal(STATE_VERSION),
  context: v.string(),
  old: Creds,
  new_ca: v.object({ crt: Pem, key: Pem }),
  next: Creds,
});

/** Where the state of a rotation over the client config at `configPath` lives. */
export function rotationStatePath(configPath: string): string {
  return `${configPath}.rotate-ca.yaml`;
}

/** The old credentials from a context's resolved credentials. */
export function pemCredentials(c: ClientCredentials): PemCredentials {
  return { caPem: c.caPem, certPem: c.certPem, keyPem: c.keyPem };
}

/**
 * The state at `path`, or undefined when no rotation is in progress.
 * @throws Error naming the file when it is not a rotation state, or its CA key does not fit
 */
export async function readRotationState(path: string): Promise<RotationState | undefined> {
  if (!(await pathExists(path))) return undefined;
  const result = v.safeParse(StateSchema, parse(await Deno.readTextFile(path)));
  if (!result.success) {
    throw new Error(`"${path}" is not a rotate-ca state file (version ${STATE_VERSION})`);
  }
  const s = result.output;
  const creds = (c: { ca: string; crt: string; key: string }) => ({
    caPem: c.ca,
    certPem: c.crt,
    keyPem: c.key,
  });
  return {
    context: s.context,
    old: creds(s.old),
    newCa: await loadCertificateAuthority(s.new_ca.crt, s.new_ca.key, path),
    next: creds(s.next),
  };
}

/** Writes `state` to `path` (0600, atomically). */
export async function writeRotationState(path: string, state: RotationState): Promise<void> {
  const creds = (c: PemCredentials) => ({ ca: c.caPem, crt: c.certPem, key: c.keyPem });
  const text = stringify({
    version: STATE_VERSION,
    context: state.context,
    old: creds(state.old),
    new_ca: { crt: state.newCa.certPem, key: state.newCa.keyPem },
    next: creds(state.next),
  });
  await writeFileAtomic(path, text, { mode: 0o600 });
}
