/**
 * The SecureBootStatus of a node, gathered from a {@link FirmwareBackend}. Every read that fails
 * becomes an `unknown` and a reason, never an exception: a node without EFI, with an unreadable
 * variable or a malformed db still publishes what it does know. The interpreting steps are pure
 * functions at the bottom.
 * @module
 */
import {
  EFI_CERT_SHA256_GUID,
  EFI_CERT_X509_GUID,
  EFI_GLOBAL_VARIABLE_GUID,
  EFI_IMAGE_SECURITY_DATABASE_GUID,
  type FirmwareBackend,
  MAX_SIGNATURE_DATABASE_BYTES,
  parseSignatureLists,
} from "../../platform/firmware/mod.ts";
import { certificateFingerprint, x509 } from "../../pki/mod.ts";
import type {
  FirmwareSwitch,
  KeyDatabaseStatus,
  LockdownMode,
  PcrValue,
  SecureBootCertificate,
  SecureBootStatusSpec,
} from "../../resources/mod.ts";

/** Why the switches are unknown on a node that did not boot through UEFI. */
export const NO_EFI_REASON = "no EFI firmware: /sys/firmware/efi is absent (a BIOS or a Pi boot)";
/** SecureBoot and SetupMode are one byte; anything past a few is not the firmware's. */
const MAX_SWITCH_BYTES = 16;
/** Key databases to read: name, vendor GUID and the spec field. */
const DATABASES = [
  ["PK", EFI_GLOBAL_VARIABLE_GUID, "pk"],
  ["KEK", EFI_GLOBAL_VARIABLE_GUID, "kek"],
  ["db", EFI_IMAGE_SECURITY_DATABASE_GUID, "db"],
] as const;

/** A key database that was not read. */
const ABSENT_DATABASE: KeyDatabaseStatus = {
  present: false,
  certificates: [],
  hashes: 0,
  other: 0,
  reason: "",
};

/** Gathers the whole status. Never throws: failures are reported in `reason` fields. */
export async function readSecureBootStatus(
  backend: FirmwareBackend,
): Promise<SecureBootStatusSpec> {
  const [efi, lockdown, tpm] = await Promise.all([
    attempt(() => backend.efi()),
    attempt(() => backend.lockdown()),
    attempt(() => backend.tpm()),
  ]);
  const base = {
    lockdown: lockdown.ok ? parseLockdown(lockdown.value) : "unknown" as const,
    tpm: tpm.ok && tpm.value.present,
    pcrs: tpm.ok ? pcrValues(tpm.value.pcrSha256) : [],
  };
  if (!efi.ok || !efi.value) {
    return {
      efi: false,
      secureBoot: "unknown",
      setupMode: "unknown",
      reason: efi.ok ? NO_EFI_REASON : `cannot tell whether EFI booted: ${efi.error}`,
      ...base,
      pk: ABSENT_DATABASE,
      kek: ABSENT_DATABASE,
      db: ABSENT_DATABASE,
    };
  }
  const reasons: string[] = [];
  const readSwitch = async (name: string): Promise<FirmwareSwitch> => {
    const r = await attempt(() =>
      backend.efiVariable(name, EFI_GLOBAL_VARIABLE_GUID, MAX_SWITCH_BYTES)
    );
    if (!r.ok) reasons.push(`${name}: ${r.error}`);
    else if (r.value === undefined) reasons.push(`${name}: the firmware sets no such variable`);
    return r.ok ? firmwareSwitch(r.value) : "unknown";
  };
  const secureBoot = await readSwitch("SecureBoot");
  const setupMode = await readSwitch("SetupMode");
  const dbs: Record<string, KeyDatabaseStatus> = {};
  for (const [name, guid, field] of DATABASES) {
    const r = await attempt(() => backend.efiVariable(name, guid, MAX_SIGNATURE_DATABASE_BYTES));
    dbs[field] = r.ok
      ? await describeKeyDatabase(r.value)
      : { ...ABSENT_DATABASE, reason: r.error };
  }
  return {
    efi: true,
    secureBoot,
    setupMode,
    reason: reasons.join("; "),
    ...base,
    pk: dbs.pk,
    kek: dbs.kek,
    db: dbs.db,
  };
}

type Attempt<T> = { ok: true; value: T } | { ok: false; error: string };

/** Runs `read`, turning a throw (sync or async) into a message. */
async function attempt<T>(read: () => Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * A key database variable's data as certificates and counts; a malformed one is reported in
 * `reason` with nothing listed, since a partial list would read as the whole.
 */
export async function describeKeyDatabase(
  data: Uint8Array | undefined,
): Promise<KeyDatabaseStatus> {
  if (data === undefined) return ABSENT_DATABASE;
  let signatures;
  try {
    signatures = parseSignatureLists(data);
  } catch (e) {
    return { ...ABSENT_DATABASE, present: true, reason: (e as Error).message };
  }
  const certificates: SecureBootCertificate[] = [];
  let hashes = 0;
  let other = 0;
  for (const s of signatures) {
    if (s.type === EFI_CERT_SHA256_GUID) hashes++;
    else if (s.type !== EFI_CERT_X509_GUID) other++;
    else {
      const cert = await describeCertificate(s.data, s.owner);
      if (cert) certificates.push(cert);
      else other++;
    }
  }
  return { present: true, certificates, hashes, other, reason: "" };
}

/** A DER certificate's subject and fingerprint; undefined when it does not parse. */
export async function describeCertificate(
  der: Uint8Array,
  owner: string,
): Promise<SecureBootCertificate | undefined> {
  let subject: string;
  try {
    subject = new x509.X509Certificate(der.slice()).subject;
  } catch {
    return undefined;
  }
  return { subject, sha256: await certificateFingerprint(der), owner };
}

/** A one-byte firmware switch: 1 on, 0 off; absent, empty or any other value unknown. Pure. */
export function firmwareSwitch(data: Uint8Array | undefined): FirmwareSwitch {
  if (data?.length !== 1) return "unknown";
  return data[0] === 1 ? "on" : data[0] === 0 ? "off" : "unknown";
}

/** The bracketed word of the lockdown file (`none [integrity] confidentiality`). Pure. */
export function parseLockdown(text: string | undefined): LockdownMode {
  const word = text?.match(/\[([a-z]+)\]/)?.[1];
  return word === "none" || word === "integrity" || word === "confidentiality" ? word : "unknown";
}

/** The PCRs offered, as hex by index; values that are not 64 hex digits are left out. Pure. */
export function pcrValues(pcrs: readonly (string | undefined)[]): PcrValue[] {
  return pcrs.flatMap((v, index) =>
    v !== undefined && /^[0-9a-f]{64}$/.test(v) ? [{ index, sha256: v }] : []
  );
}
