import assert from "node:assert/strict";
import { ChallengeError, ResetChallenger } from "./challenge.ts";

const claims = { node: "n1", bootId: "boot-1", partitions: ["a", "b"] };

function clocks() {
  let t = 1000;
  return { mono: () => t, advance: (ms: number) => (t += ms) };
}

async function refused(p: Promise<void>, reason: string) {
  await assert.rejects(p, (e) => e instanceof ChallengeError && e.reason === reason);
}

Deno.test("a challenge verifies for the same node, boot and partitions before expiry", async () => {
  const c = new ResetChallenger(60_000);
  const { token, expires } = await c.issue(claims);
  assert.ok(expires > Date.now());
  await c.verify(token, claims);
});

Deno.test("another boot, node, partition set or an expired challenge is refused", async () => {
  const clock = clocks();
  const c = new ResetChallenger(60_000, clock.mono);
  const { token } = await c.issue(claims);
  await refused(c.verify(token, { ...claims, bootId: "boot-2" }), "boot");
  await refused(c.verify(token, { ...claims, node: "n2" }), "node");
  await refused(c.verify(token, { ...claims, partitions: ["a"] }), "partitions");
  await refused(c.verify(token, { ...claims, partitions: ["a", "b", "c"] }), "partitions");
  clock.advance(60_000);
  await refused(c.verify(token, claims), "expired");
});

Deno.test("a challenge from another key (a previous boot) or tampered with is refused", async () => {
  const old = new ResetChallenger();
  const { token } = await old.issue(claims);
  const now = new ResetChallenger();
  await refused(now.verify(token, claims), "signature");
  // Re-bind the payload to more partitions without the key: the MAC no longer holds.
  const [p, body, mac] = token.split(".");
  const forged = JSON.parse(atob(body.replace(/-/g, "+").replace(/_/g, "/")));
  forged.partitions = ["a", "b", "esp"];
  const forgedBody = btoa(JSON.stringify(forged)).replace(/=+$/, "").replace(/\+/g, "-")
    .replace(/\//g, "_");
  await refused(old.verify(`${p}.${forgedBody}.${mac}`, claims), "signature");
  for (const bad of ["", "x", "mdr1.a", "mdr1.!!.??", "jwt.a.b", `mdr1.${"a".repeat(5000)}.b`]) {
    await refused(now.verify(bad, claims), "malformed");
  }
});
