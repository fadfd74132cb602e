import assert from "node:assert/strict";
import { join } from "node:path";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { DAY_MS, type KeyedCertificate } from "./keyed_certificate.ts";
import { PKI_FILES } from "./node_pki.ts";
import { issueServerCertificate, subjectAltNamesOf } from "./server_certificate.ts";
import { createServerCertRenewer, type RenewerClock } from "./server_cert_renewer.ts";

/**
 * A manual clock: time moves only when the test advances it, and timers due by
 * then fire. The renewer schedules its next timer after async work, so tests
 * await {@link FakeClock.nextTimer} (an event, not a poll) before advancing.
 */
class FakeClock implements RenewerClock {
  #now: number;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;
  #waiters: (() => void)[] = [];
  constructor(start: Date) {
    this.#now = start.getTime();
  }
  now(): Date {
    return new Date(this.#now);
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + ms, fn });
    for (const w of this.#waiters.splice(0)) w();
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  get pending(): number {
    return this.#timers.size;
  }
  /** Resolves when the next timer is set. */
  nextTimer(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
  /**
   * Step the wall clock (NTP) without moving the timers: they count elapsed
   * time, as the real setTimeout does.
   */
  jump(ms: number): void {
    this.#now += ms;
    for (const t of this.#timers.values()) t.at += ms;
  }
  /** Move time forward and fire the timers now due. */
  advance(ms: number): void {
    this.#now += ms;
    for (const [id, t] of [...this.#timers]) {
      if (t.at > this.#now) continue;
      this.#timers.delete(id);
      t.fn();
    }
  }
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

function withTimeout<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const names = { hostnames: ["node-1"], addresses: ["10.0.0.5"] };

Deno.test("the renewer replaces the certificate when due, with a new serial, and persists it", async () => {
  const dir = await Deno.makeTempDir();
  const start = new Date("2030-01-01T00:00:00Z");
  const clock = new FakeClock(start);
  const ca = await createCertificateAuthority({ now: start });
  const current = await issueServerCertificate({ ca, ...names, now: start });
  let renewed = deferred<KeyedCertificate>();
  const renewer = createServerCertRenewer({
    ca,
    current,
    ...names,
    dir,
    clock,
    onRenewed: (c) => renewed.resolve(c),
  });
  try {
    let scheduled = clock.nextTimer();
    clock.advance(300 * DAY_MS); // first check: not due
    await withTimeout(scheduled);
    assert.equal(renewer.current, current);

    scheduled = clock.nextTimer();
    clock.advance(36 * DAY_MS); // past notAfter - 30 days
    const next = await withTimeout(renewed.promise);
    await withTimeout(scheduled);
    assert.notEqual(next.cert.serialNumber, current.cert.serialNumber);
    assert.equal(renewer.current, next);
    assert.ok(await next.cert.verify({ publicKey: ca.cert.publicKey, date: clock.now() }));
    assert.equal(await Deno.readTextFile(join(dir, PKI_FILES.serverCert)), next.certPem);
    assert.equal((await Deno.stat(join(dir, PKI_FILES.serverKey))).mode! & 0o777, 0o600);

    // names change: immediate re-issue covering the new address
    renewed = deferred();
    assert.equal(
      await renewer.updateNames({ hostnames: ["node-1"], addresses: ["10.0.0.7"] }),
      true,
    );
    const moved = await withTimeout(renewed.promise);
    assert.ok(subjectAltNamesOf(moved.cert).ip.includes("10.0.0.7"));
  } finally {
    renewer.stop();
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(clock.pending, 0, "stop() clears the timer");
});

Deno.test("a failed renewal is reported and retried", async () => {
  const start = new Date("2030-01-01T00:00:00Z");
  const clock = new FakeClock(start);
  const ca = await createCertificateAuthority({ now: start });
  const current = await issueServerCertificate({ ca, ...names, now: start });
  const errors: unknown[] = [];
  const failed = deferred<void>();
  let attempts = 0;
  const renewed = deferred<void>();
  const renewer = createServerCertRenewer({
    ca,
    current,
    ...names,
    clock,
    retryDelayMs: 1000,
    onError: (e) => {
      errors.push(e);
      failed.resolve();
    },
    onRenewed: () => {
      if (++attempts === 1) throw new Error("swap failed");
      renewed.resolve();
    },
  });
  try {
    const retry = clock.nextTimer();
    clock.advance(340 * DAY_MS);
    await withTimeout(failed.promise);
    await withTimeout(retry);
    assert.equal(errors.length, 1);
    assert.equal(renewer.current, current, "a failed swap does not change current");
    const after = clock.nextTimer();
    clock.advance(1000);
    await withTimeout(renewed.promise);
    await withTimeout(after);
    assert.notEqual(renewer.current, current);
  } finally {
    renewer.stop();
  }
});

Deno.test("a certificate issued in 1970 (no real-time clock) is renewed within a minute of NTP's step", async () => {
  const epoch = new Date("1970-01-01T00:00:10Z");
  const clock = new FakeClock(epoch);
  const ca = await createCertificateAuthority({ now: new Date("2026-12-01T00:00:00Z") });
  const current = await issueServerCertificate({ ca, ...names, now: epoch });
  const renewed = deferred<KeyedCertificate>();
  const renewer = createServerCertRenewer({
    ca,
    current,
    ...names,
    clock,
    onRenewed: (c) => renewed.resolve(c),
  });
  try {
    const scheduled = clock.nextTimer();
    clock.advance(0); // the first check: valid in 1970
    await withTimeout(scheduled);
    assert.equal(renewer.current, current);
    clock.jump(Date.parse("2026-12-02T00:00:00Z") - epoch.getTime());
    clock.advance(60_000);
    const next = await withTimeout(renewed.promise);
    assert.ok(next.cert.notBefore.getTime() > Date.parse("2026-12-01T00:00:00Z"));
  } finally {
    renewer.stop();
  }
});
