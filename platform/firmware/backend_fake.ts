/**
 * FakeFirmwareBackend: firmware facts held in memory, with seeders and failure injection.
 * @module
 */
import { FaultInjector } from "../mod.ts";
import { type FirmwareBackend, FirmwareReadError, PCR_COUNT, type TpmFacts } from "./backend.ts";

/** A node's firmware as a test lays it out. Defaults: no EFI, no lockdown file, no TPM. */
export class FakeFirmwareBackend implements FirmwareBackend {
  readonly faults = new FaultInjector();
  /** Whether the node booted through UEFI. */
  hasEfi = false;
  /** The lockdown file's text; undefined for no file. */
  lockdownText: string | undefined;
  /** Whether a TPM is registered. */
  hasTpm = false;
  /** PCR values by index (hex); unset ones are not offered. */
  readonly pcrs = new Map<number, string>();
  readonly #vars = new Map<string, Uint8Array>();

  /** Sets a variable's data (without the attribute prefix); also turns EFI on. */
  setVariable(name: string, guid: string, data: Uint8Array): this {
    this.hasEfi = true;
    this.#vars.set(`${name}-${guid}`, data.slice());
    return this;
  }

  efi(): Promise<boolean> {
    this.faults.check("efi");
    return Promise.resolve(this.hasEfi);
  }

  efiVariable(name: string, guid: string, maxBytes: number): Promise<Uint8Array | undefined> {
    this.faults.check("efiVariable", [name, guid, maxBytes]);
    const data = this.hasEfi ? this.#vars.get(`${name}-${guid}`) : undefined;
    if (data && data.length > maxBytes) {
      return Promise.reject(
        new FirmwareReadError(`${name}-${guid}`, `larger than ${maxBytes} bytes`),
      );
    }
    return Promise.resolve(data?.slice());
  }

  lockdown(): Promise<string | undefined> {
    this.faults.check("lockdown");
    return Promise.resolve(this.lockdownText);
  }

  tpm(): Promise<TpmFacts> {
    this.faults.check("tpm");
    const pcrSha256 = Array.from(
      { length: PCR_COUNT },
      (_, i) => this.hasTpm ? this.pcrs.get(i) : undefined,
    );
    return Promise.resolve({ present: this.hasTpm, pcrSha256 });
  }
}
