/**
 * What other harnesses reuse from the QEMU tier: the CIDATA drive an operator
 * would make, and machinectl against a VM's forwarded port with its `get -o
 * json` output parsed (bench/boot_encryption.ts boots nodes the way the e2e
 * cases do). The cases themselves import their helpers directly.
 * @module
 */
export { writeCidataVolume } from "./cidata.ts";
export { machinectl, parseDocs, type ResourceDoc, waitForDocs } from "./helpers.ts";
