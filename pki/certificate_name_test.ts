import { equal, match, rejects } from "node:assert/strict";
import { certificateNameProblem, MAX_CERTIFICATE_NAME_LENGTH } from "./certificate_name.ts";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { issueClientCertificate } from "./client_certificate.ts";

Deno.test("certificate names: letters of any script, digits, spaces inside, punctuation pass", () => {
  for (
    const ok of ["alice", "ci-bot@example.org", "älice, x", "ops team 2", "名前", "a".repeat(64)]
  ) {
    equal(certificateNameProblem(ok), undefined, ok);
  }
});

Deno.test("certificate names: control, format, separator and odd spaces refused, naming the character", () => {
  const cases: [string, RegExp][] = [
    ["\x1b]0;pwned\x07", /U\+001B at character 1/],
    ["alice\n[info] audit: forged", /U\+000A at character 6/],
    ["a\rb", /U\+000D/],
    ["a\u009bb", /U\+009B/],
    ["evil\u202egnp.exe", /U\+202E at character 5/],
    ["a\u200bb", /U\+200B/],
    ["a\u00a0b", /U\+00A0/],
    ["a\u2028b", /U\+2028/],
    ["a\x7f", /U\+007F/],
    ["a\tb", /U\+0009/],
    [" alice", /starts or ends with a space/],
    ["", /is empty/],
    ["a".repeat(MAX_CERTIFICATE_NAME_LENGTH + 1), /65 characters, more than 64/],
  ];
  for (const [name, want] of cases) match(certificateNameProblem(name) ?? "(none)", want, name);
  // The quoted name carries no raw ESC: JSON.stringify escapes it.
  equal(certificateNameProblem("\x1b")!.includes("\x1b"), false);
});

Deno.test("issueClientCertificate refuses a name with an escape sequence or a newline", async () => {
  const ca = await createCertificateAuthority();
  await rejects(
    issueClientCertificate({ ca, name: "x\x1b[2J", role: "os:reader" }),
    (e) => e instanceof RangeError && /the name .*U\+001B/.test(e.message),
  );
  await rejects(
    issueClientCertificate({ ca, name: "x\n[info] audit: forged", role: "os:reader" }),
    RangeError,
  );
});
