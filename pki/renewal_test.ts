import assert from "node:assert/strict";
import { DAY_MS } from "./keyed_certificate.ts";
import { needsRenewal, renewalTime } from "./renewal.ts";

const t0 = new Date("2030-01-01T00:00:00Z");
const at = (days: number) => new Date(t0.getTime() + days * DAY_MS);
const oneYear = { notBefore: t0, notAfter: at(365) };

Deno.test("a 1-year certificate renews 30 days before expiry", () => {
  assert.equal(renewalTime(oneYear).toISOString(), at(335).toISOString());
  assert.equal(needsRenewal(oneYear, at(0)), false);
  assert.equal(needsRenewal(oneYear, at(334.9)), false);
  assert.equal(needsRenewal(oneYear, at(335)), true);
  assert.equal(needsRenewal(oneYear, at(400)), true, "expired");
});

Deno.test("a short certificate renews when a third of its life remains, not at once", () => {
  const hour = 60 * 60 * 1000;
  const short = { notBefore: t0, notAfter: new Date(t0.getTime() + 3 * hour) };
  assert.equal(renewalTime(short).getTime(), t0.getTime() + 2 * hour);
  assert.equal(needsRenewal(short, new Date(t0.getTime() + hour)), false);
  assert.equal(needsRenewal(short, new Date(t0.getTime() + 2 * hour)), true);
});

Deno.test("a certificate from the future (clock moved back) needs renewal", () => {
  assert.equal(needsRenewal(oneYear, at(-1)), true);
});

Deno.test("policy overrides", () => {
  assert.equal(needsRenewal(oneYear, at(300), { beforeMs: 90 * DAY_MS }), true);
  assert.equal(needsRenewal(oneYear, at(300), { beforeMs: 90 * DAY_MS, fraction: 0.1 }), false);
});
