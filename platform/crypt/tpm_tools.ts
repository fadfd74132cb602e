/**
 * ToolsTpmBackend: the `tpm` key kind on Debian's tpm2-tools, run through the
 * process backend. A key to seal and an unsealed key travel in 0600 files in
 * a fresh 0700 directory under `keyDir` (tmpfs on the node), never argv,
 * removed when the operation ends (as NativeCryptBackend does for cryptsetup).
 *
 * Sealing: TPM2_PolicyAuthorize names the policy-signing key (loaded as an
 * external public key), a sealed data object under the owner hierarchy's ECC
 * primary takes that as its policy (`adminwithpolicy`, `noda`). Unsealing:
 * the TPM verifies the signed PCR policy (a ticket), a policy session runs
 * PolicyPCR then PolicyAuthorize with the ticket, and TPM2_Unseal answers
 * only if PCR 11 holds the signed value. Every transient object and session
 * is flushed after each step (without a resource manager, swtpm's socket, a
 * TPM holds three transient objects). @module
 */
import { type ProcessBackend, runTool, ToolError, type ToolRun } from "../process/mod.ts";
import {
  type PolicyPublicKeyPem,
  publicKeyFingerprint,
  type SealedKey,
  type SignedPcrPolicy,
  type TpmBackend,
  TpmPolicyError,
  TpmUnavailableError,
} from "./tpm.ts";

/** A tpm2-tools command failed; argv holds paths, never keys. */
export class Tpm2ToolsError extends ToolError {
  override name = "Tpm2ToolsError";
}

/** Options of {@link ToolsTpmBackend}. */
export interface ToolsTpmOptions {
  process: ProcessBackend;
  /** The TSS2 TCTI (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`). @default device:/dev/tpmrm0 */
  tcti?: string;
  /** Where key files live for the length of one operation. @default "/run/machined/crypt" */
  keyDir?: string;
}

/** tpm2-tools' multi-call binary (each `tpm2_*` name links to it). */
export const TPM2 = "tpm2";
const SEALED_ATTRIBUTES = "fixedtpm|fixedparent|adminwithpolicy|noda";
/** What tpm2-tools prints when the TCTI cannot reach a TPM. */
const NO_TPM = /Could not load tcti|Failed to instantiate TCTI/;

/** The real backend (tpm2-tools). */
export class ToolsTpmBackend implements TpmBackend {
  readonly #process: ProcessBackend;
  readonly #tcti: string;
  readonly #keyDir: string;

  constructor(options: ToolsTpmOptions) {
    this.#process = options.process;
    this.#tcti = options.tcti ?? "device:/dev/tpmrm0";
    this.#keyDir = options.keyDir ?? "/run/machined/crypt";
  }

  async seal(
    key: Uint8Array,
    publicKey: PolicyPublicKeyPem,
    pcrs: readonly number[],
  ): Promise<SealedKey> {
    const keyFingerprint = await publicKeyFingerprint(publicKey);
    return await this.#inDir(async (f) => {
      await Deno.writeFile(f("pub.pem"), new TextEncoder().encode(publicKey), { mode: 0o600 });
      await Deno.writeFile(f("key"), key, { mode: 0o600, createNew: true });
      await this.#loadSigningKey(f);
      await this.#ok("tpm2_startauthsession", "-S", f("trial.ctx"));
      try {
        await this.#ok(
          "tpm2_policyauthorize",
          "-S",
          f("trial.ctx"),
          "-L",
          f("auth.policy"),
          "-n",
          f("signing.name"),
        );
      } finally {
        await this.#run("tpm2_flushcontext", f("trial.ctx"));
      }
      await this.#primary(f);
      await this.#flushing(
        "tpm2_create",
        "-C",
        f("primary.ctx"),
        "-L",
        f("auth.policy"),
        "-i",
        f("key"),
        "-u",
        f("sealed.pub"),
        "-r",
        f("sealed.priv"),
        "-a",
        SEALED_ATTRIBUTES,
      );
      return {
        public: await Deno.readFile(f("sealed.pub")),
        private: await Deno.readFile(f("sealed.priv")),
        pcrs: [...pcrs],
        keyFingerprint,
      };
    });
  }

  async unseal(
    sealed: SealedKey,
    publicKey: PolicyPublicKeyPem,
    signed: SignedPcrPolicy,
  ): Promise<Uint8Array> {
    await checkSigned(sealed, publicKey, signed);
    return await this.#inDir(async (f) => {
      await Deno.writeFile(f("pub.pem"), new TextEncoder().encode(publicKey), { mode: 0o600 });
      await Deno.writeFile(f("sealed.pub"), sealed.public);
      await Deno.writeFile(f("sealed.priv"), sealed.private);
      await Deno.writeFile(f("pcr.policy"), signed.policy);
      await Deno.writeFile(f("pcr.sig"), signed.signature);
      await this.#loadSigningKey(f, async () => {
        await this.#refusing("the signature", "the signed PCR policy is not the enrolled key's", [
          "tpm2_verifysignature",
          "-c",
          f("signing.ctx"),
          "-g",
          "sha256",
          "-m",
          f("pcr.policy"),
          "-s",
          f("pcr.sig"),
          "-f",
          "rsassa",
          "-t",
          f("verified.ticket"),
        ]);
      });
      await this.#primary(f);
      await this.#refusing("load", "this TPM did not seal the key (another board, a cleared TPM)", [
        "tpm2_load",
        "-C",
        f("primary.ctx"),
        "-u",
        f("sealed.pub"),
        "-r",
        f("sealed.priv"),
        "-c",
        f("sealed.ctx"),
      ]).finally(() => this.#run("tpm2_flushcontext", "-t"));
      await this.#ok("tpm2_startauthsession", "--policy-session", "-S", f("policy.ctx"));
      try {
        const pcrList = `sha256:${signed.pcrs.join(",")}`;
        await this.#ok("tpm2_policypcr", "-S", f("policy.ctx"), "-l", pcrList);
        await this.#refusing(
          "PCR policy",
          `PCR ${signed.pcrs.join(",")} does not hold the signed value`,
          [
            "tpm2_policyauthorize",
            "-S",
            f("policy.ctx"),
            "-i",
            f("pcr.policy"),
            "-n",
            f("signing.name"),
            "-t",
            f("verified.ticket"),
          ],
        );
        await this.#refusing("unseal", "TPM2_Unseal refused the policy session", [
          "tpm2_unseal",
          "-c",
          f("sealed.ctx"),
          "-p",
          `session:${f("policy.ctx")}`,
          "-o",
          f("key"),
        ]);
        return await Deno.readFile(f("key"));
      } finally {
        await this.#run("tpm2_flushcontext", f("policy.ctx"));
        await this.#run("tpm2_flushcontext", "-t");
      }
    });
  }

  async readPcr(index: number): Promise<Uint8Array> {
    return await this.#inDir(async (f) => {
      await this.#ok("tpm2_pcrread", `sha256:${index}`, "-o", f("pcr"));
      return await Deno.readFile(f("pcr"));
    });
  }

  async extend(index: number, data: Uint8Array): Promise<void> {
    const d = new Uint8Array(await crypto.subtle.digest("SHA-256", data.slice()));
    await this.#ok("tpm2_pcrextend", `${index}:sha256=${d.toHex()}`);
  }

  /** Load the signing key as an external object (for its name), run `use`, flush it. */
  async #loadSigningKey(f: (n: string) => string, use?: () => Promise<void>): Promise<void> {
    await this.#ok(
      "tpm2_loadexternal",
      "-C",
      "o",
      "-G",
      "rsa",
      "-u",
      f("pub.pem"),
      "-c",
      f("signing.ctx"),
      "-n",
      f("signing.name"),
    );
    try {
      await use?.();
    } finally {
      await this.#run("tpm2_flushcontext", "-t");
    }
  }

  /** The owner hierarchy's ECC primary (the same every time from the same seed). */
  async #primary(f: (n: string) => string): Promise<void> {
    await this.#flushing(
      "tpm2_createprimary",
      "-C",
      "o",
      "-g",
      "sha256",
      "-G",
      "ecc",
      "-c",
      f("primary.ctx"),
    );
  }

  async #flushing(...argv: string[]): Promise<void> {
    try {
      await this.#ok(...argv);
    } finally {
      await this.#run("tpm2_flushcontext", "-t");
    }
  }

  /** Run `argv`; a refusal by the TPM becomes a TpmPolicyError naming `step`. */
  async #refusing(step: string, why: string, argv: string[]): Promise<void> {
    const r = await this.#run(...argv);
    if (r.exit.code === 0) return;
    if (NO_TPM.test(r.stderr)) throw new TpmUnavailableError(this.#tcti);
    throw new TpmPolicyError(step, why, { cause: this.#error(argv, r) });
  }

  #run(...argv: string[]): Promise<ToolRun> {
    return runTool(this.#process, toolArgv(this.#tcti, argv));
  }

  async #ok(...argv: string[]): Promise<string> {
    const r = await this.#run(...argv);
    if (r.exit.code === 0) return r.stdout;
    if (NO_TPM.test(r.stderr)) {
      throw new TpmUnavailableError(this.#tcti, { cause: this.#error(argv, r) });
    }
    throw this.#error(argv, r);
  }

  #error(argv: string[], r: ToolRun): Tpm2ToolsError {
    return new Tpm2ToolsError(toolArgv(this.#tcti, argv), r.exit, r.stderr);
  }

  /** Run `fn` with a private directory (`f(name)` is a path in it); always removed. */
  async #inDir<T>(fn: (f: (name: string) => string) => Promise<T>): Promise<T> {
    await Deno.mkdir(this.#keyDir, { recursive: true, mode: 0o700 });
    const dir = await Deno.makeTempDir({ dir: this.#keyDir, prefix: "t" });
    try {
      await Deno.chmod(dir, 0o700);
      return await fn((name) => `${dir}/${name}`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
}

/** `tpm2_unseal …` as `tpm2 unseal -T tcti …`: the image ships the one multi-call binary. Pure. */
export function toolArgv(tcti: string, argv: readonly string[]): string[] {
  return [TPM2, argv[0].replace(/^tpm2_/, ""), "-T", tcti, ...argv.slice(1)];
}

/** What both backends check before the TPM: the policy covers the sealed PCRs, by the right key. */
export async function checkSigned(
  sealed: SealedKey,
  publicKey: PolicyPublicKeyPem,
  signed: SignedPcrPolicy,
): Promise<void> {
  if (await publicKeyFingerprint(publicKey) !== sealed.keyFingerprint) {
    throw new TpmPolicyError("key", "the policy key is not the one the key was sealed for");
  }
  const want = [...sealed.pcrs].sort((a, b) => a - b).join(",");
  const got = [...signed.pcrs].sort((a, b) => a - b).join(",");
  if (want !== got) {
    throw new TpmPolicyError("PCRs", `the signed policy covers PCRs ${got}, the key needs ${want}`);
  }
}
