/**
 * `machine.upgrade`: whose upgrade bundles this node installs
 * (docs/upgrade.md).
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { Duration } from "./primitives.ts";

const PUBLIC_KEY_PEM =
  /^-----BEGIN PUBLIC KEY-----\s*\n[A-Za-z0-9+/=\s]+-----END PUBLIC KEY-----\s*$/;

/** `machine.upgrade`. */
export const UpgradeSchema = mapping({
  trusted_keys: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string("expected a PEM public key"),
          v.regex(PUBLIC_KEY_PEM, "expected an Ed25519 public key in SPKI PEM (BEGIN PUBLIC KEY)"),
        ),
        "expected a list of PEM public keys",
      ),
      v.maxLength(16, "at most 16 trusted keys"),
      v.description(
        "Ed25519 public keys (SPKI PEM, from `machinectl gen signing-key`) whose signed upgrade bundles this node installs. Empty: every bundle is refused.",
      ),
    ),
    [],
  ),
  trial_deadline: v.optional(
    v.pipe(
      Duration,
      v.check((ms: number) => ms >= 60_000, "trial_deadline must be at least 1m"),
      v.description(
        "How long a newly upgraded slot has, from machined's start, to become ready (MachineStatus ready) before it is marked bad and the node reboots into the slot it came from. Generous by default: under emulation a healthy node took 3–4 min. Milliseconds in the parsed config.",
      ),
    ),
    "15m",
  ),
  boot_tries: v.optional(
    v.pipe(
      v.number("expected a whole number"),
      v.integer("boot_tries must be a whole number"),
      v.minValue(1, "boot_tries must be at least 1"),
      v.maxValue(10, "boot_tries must be at most 10"),
      v.description(
        "How many times the loader starts a newly upgraded slot before it gives up and boots the slot it came from (systemd-boot's boot counting; the first try may be a kexec). Each failed try costs a boot, a panic or a watchdog timeout. 1 to 10; a Raspberry Pi's tryboot always gives one. Read at each upgrade.",
      ),
    ),
    3,
  ),
});

/** A parsed `machine.upgrade`; `trial_deadline` in ms. */
export type UpgradeConfig = v.InferOutput<typeof UpgradeSchema>;
