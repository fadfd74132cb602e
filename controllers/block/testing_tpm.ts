/**
 * Test support: a board's TPM for `tpm` slots on fakes: a FakeTpmBackend, a
 * throwaway policy-signing key and this boot's signed PCR 11 policy, and a
 * switch that makes the node find no TPM (as with no /dev/tpmrm0).
 * @module
 */
import {
  FakeTpmBackend,
  generatePolicyKey,
  MemoryTpmPolicy,
  type PolicyKey,
  signPcrPolicy,
  type TpmKeys,
  UKI_PCR,
} from "../../platform/crypt/mod.ts";

/** A TPM the block domain can use, with the test's levers. */
export class TestTpm implements TpmKeys {
  readonly tpm = new FakeTpmBackend();
  policy: MemoryTpmPolicy = new MemoryTpmPolicy(undefined);
  /** What `unavailable` answers (`no TPM device (/dev/tpmrm0)`); undefined: present. */
  missing: string | undefined;

  private constructor(readonly key: PolicyKey) {}

  /** A present TPM with a policy signed for PCR 11 as it is now. */
  static async create(): Promise<TestTpm> {
    const t = new TestTpm(await generatePolicyKey());
    await t.signCurrent();
    return t;
  }

  /** The boot's signed policy, for PCR 11's value now (what a new UKI brings). */
  async signCurrent(): Promise<void> {
    const pcr = await this.tpm.readPcr(UKI_PCR);
    const signed = await signPcrPolicy(this.key.privateKey, new Map([[UKI_PCR, pcr]]));
    this.policy = new MemoryTpmPolicy(this.key.publicPem, [signed]);
  }

  unavailable(): Promise<string | undefined> {
    return Promise.resolve(this.missing);
  }
}
