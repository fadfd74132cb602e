/**
 * One suite both firmware backends pass: the fake always, the native one over a sysfs laid out
 * in a temporary directory. It pins what absence means and the size refusal.
 * @module
 */
import assert from "node:assert/strict";
import { type FirmwareBackend, FirmwareReadError } from "./backend.ts";
import { EFI_GLOBAL_VARIABLE_GUID } from "./guid.ts";

/** A backend and a way to lay out the facts it reads. */
export interface FirmwareTarget {
  readonly backend: FirmwareBackend;
  /** Boot through UEFI with this variable set (data without the attribute prefix). */
  setVariable(name: string, guid: string, data: Uint8Array): Promise<void>;
  setLockdown(text: string): Promise<void>;
  /** Register a TPM offering these SHA-256 PCRs. */
  setTpm(pcrs: ReadonlyMap<number, string>): Promise<void>;
  close(): Promise<void>;
}

/** Runs the suite against fresh targets from `make`. */
export function firmwareBackendConformance(
  label: string,
  make: () => Promise<FirmwareTarget>,
): void {
  const test = (name: string, fn: (t: FirmwareTarget) => Promise<void>) =>
    Deno.test(`${label}: ${name}`, async () => {
      const t = await make();
      try {
        await fn(t);
      } finally {
        await t.close();
      }
    });

  test("nothing laid out: no EFI, no variable, no lockdown, no TPM", async ({ backend }) => {
    assert.equal(await backend.efi(), false);
    assert.equal(await backend.efiVariable("SecureBoot", EFI_GLOBAL_VARIABLE_GUID, 16), undefined);
    assert.equal(await backend.lockdown(), undefined);
    const tpm = await backend.tpm();
    assert.equal(tpm.present, false);
    assert.equal(tpm.pcrSha256.length, 16);
    assert.ok(tpm.pcrSha256.every((p) => p === undefined));
  });

  test("a variable's data comes back without its attributes", async (t) => {
    await t.setVariable("SecureBoot", EFI_GLOBAL_VARIABLE_GUID, Uint8Array.of(1));
    assert.equal(await t.backend.efi(), true);
    assert.deepEqual(
      await t.backend.efiVariable("SecureBoot", EFI_GLOBAL_VARIABLE_GUID, 16),
      Uint8Array.of(1),
    );
    assert.equal(await t.backend.efiVariable("SetupMode", EFI_GLOBAL_VARIABLE_GUID, 16), undefined);
  });

  test("a variable larger than asked for is refused", async (t) => {
    await t.setVariable("db", EFI_GLOBAL_VARIABLE_GUID, new Uint8Array(100));
    await assert.rejects(
      t.backend.efiVariable("db", EFI_GLOBAL_VARIABLE_GUID, 99),
      FirmwareReadError,
    );
    assert.equal((await t.backend.efiVariable("db", EFI_GLOBAL_VARIABLE_GUID, 100))?.length, 100);
  });

  test("lockdown text and the TPM's PCRs", async (t) => {
    await t.setLockdown("none [integrity] confidentiality\n");
    await t.setTpm(new Map([[0, "aa".repeat(32)], [7, "bb".repeat(32)]]));
    assert.equal(await t.backend.lockdown(), "none [integrity] confidentiality\n");
    const tpm = await t.backend.tpm();
    assert.equal(tpm.present, true);
    assert.equal(tpm.pcrSha256[0], "aa".repeat(32));
    assert.equal(tpm.pcrSha256[7], "bb".repeat(32));
    assert.equal(tpm.pcrSha256[1], undefined);
  });
}
