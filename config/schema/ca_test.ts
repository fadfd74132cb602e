import assert from "node:assert/strict";
import { createCertificateAuthority, issueClientCertificate } from "../../pki/mod.ts";
import { parseMachineConfig } from "../parse_machine_config.ts";
import { redactConfigSecrets, touchesSecret } from "../secrets.ts";
import { acceptedCaProblem, MAX_ACCEPTED_CAS } from "./ca.ts";

const block = (pem: string, indent: string) => "|\n" + pem.trimEnd().replace(/^/gm, indent) + "\n";

async function configWith(accepted: string[]) {
  const ca = await createCertificateAuthority();
  const list = accepted.map((p) => `      - ${block(p, "        ")}`).join("");
  return "version: v1alpha1\nmachine:\n  hostname: node-1\n  ca:\n" +
    `    crt: ${block(ca.certPem, "      ")}` +
    `    key: ${block(ca.keyPem, "      ")}` +
    (accepted.length ? `    accepted:\n${list}` : "");
}

Deno.test("machine.ca.accepted: CA certificates, parsed and shown to readers (no key in it)", async () => {
  const other = await createCertificateAuthority({ commonName: "next" });
  const r = parseMachineConfig(await configWith([other.certPem]), "t.yaml");
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  assert.equal(r.config.machine.ca?.accepted?.[0].trim(), other.certPem.trim());
  const shown = redactConfigSecrets(r.config).machine.ca!;
  assert.deepEqual(shown.accepted, r.config.machine.ca!.accepted);
  assert.ok(!touchesSecret(["machine", "ca", "accepted", 0]));
  const none = parseMachineConfig(await configWith([]), "t.yaml");
  assert.ok(none.ok);
  // Absent stays absent: a config without it keeps its hash (config/config_hash.ts).
  assert.equal(none.config.machine.ca?.accepted, undefined);
});

Deno.test("machine.ca.accepted refuses a leaf, an expired CA, a duplicate and too many", async () => {
  const ca = await createCertificateAuthority();
  const leaf = await issueClientCertificate({ ca, name: "admin", role: "os:admin" });
  assert.match(acceptedCaProblem(leaf.certPem) ?? "", /is not a CA/);
  const old = await createCertificateAuthority({ now: new Date("2020-01-01"), lifetimeMs: 1000 });
  assert.match(acceptedCaProblem(old.certPem) ?? "", /expired/);
  assert.equal(acceptedCaProblem(ca.certPem), undefined);
  const errors = async (accepted: string[]) => {
    const r = parseMachineConfig(await configWith(accepted), "t.yaml");
    assert.ok(!r.ok);
    return r.errors.map((e) => e.format()).join("\n");
  };
  assert.match(await errors([leaf.certPem]), /machine\.ca\.accepted\[0\].*is not a CA/);
  assert.match(await errors([old.certPem]), /expired/);
  assert.match(await errors([ca.certPem, ca.certPem]), /listed once/);
  const many = await Promise.all(
    Array.from({ length: MAX_ACCEPTED_CAS + 1 }, () => createCertificateAuthority()),
  );
  assert.match(await errors(many.map((c) => c.certPem)), /at most 4/);
});
