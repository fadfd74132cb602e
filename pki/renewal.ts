/**
 * When a certificate must be replaced. Pure, so the decision is tested with
 * plain dates and the timer around it stays trivial.
 *
 * @module
 */
import { DAY_MS } from "./keyed_certificate.ts";

/** When to renew ahead of expiry. */
export interface RenewalPolicy {
  /** Renew at most this long before `notAfter`. @default 30 days */
  beforeMs?: number;
  /** ...or when this fraction of the lifetime remains, whichever comes later. @default 1/3 */
  fraction?: number;
}

/** The validity window of a certificate (an `X509Certificate` satisfies it). */
export interface Validity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** Default: renew 30 days before expiry. */
export const DEFAULT_RENEW_BEFORE_MS = 30 * DAY_MS;

/**
 * The instant from which `cert` should be renewed: `notAfter` minus the
 * smaller of `beforeMs` and `fraction` of the lifetime. Taking the smaller
 * keeps short-lived certificates (hours, in tests) from being renewed at once
 * and forever. Pure.
 */
export function renewalTime(cert: Validity, policy: RenewalPolicy = {}): Date {
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
  const margin = Math.min(
    policy.beforeMs ?? DEFAULT_RENEW_BEFORE_MS,
    Math.max(0, lifetime) * (policy.fraction ?? 1 / 3),
  );
  return new Date(cert.notAfter.getTime() - margin);
}

/**
 * True when `cert` should be replaced at `now`: inside the renewal margin,
 * expired, or not yet valid. The last case happens when a certificate was
 * issued before the clock was set (first boot before NTP) and the clock has
 * since moved backwards; peers reject such a certificate, so it is renewed.
 * Pure.
 */
export function needsRenewal(cert: Validity, now: Date, policy: RenewalPolicy = {}): boolean {
  const t = now.getTime();
  return t < cert.notBefore.getTime() || t >= renewalTime(cert, policy).getTime();
}
