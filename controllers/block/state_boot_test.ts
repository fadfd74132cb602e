/** The boot order for an encrypted STATE before any config (state_boot.ts), pinned. */
import assert from "node:assert/strict";
import { concludeStateBoot, decideStateBoot } from "./state_boot.ts";

Deno.test("STATE at boot: only nodeid slots are tried, in slot order; the others wait for a passphrase", () => {
  const slots = [{ slot: 3, kind: "nodeid" }, { slot: 1, kind: "static" }, {
    slot: 0,
    kind: "nodeid",
  }];
  const d = decideStateBoot(slots);
  assert.equal(d.action, "unlock");
  if (d.action === "unlock") assert.deepEqual(d.slots.map((s) => s.slot), [0, 3]);
});

Deno.test("STATE at boot: tpm slots are tried first, then nodeid; static waits for a passphrase", () => {
  const slots = [{ slot: 0, kind: "nodeid" }, { slot: 1, kind: "static" }, {
    slot: 2,
    kind: "tpm",
  }];
  const d = decideStateBoot(slots);
  assert.equal(d.action, "unlock");
  if (d.action !== "unlock") return;
  assert.deepEqual(d.slots, [{ slot: 2, kind: "tpm" }, { slot: 0, kind: "nodeid" }]);
  assert.match(d.reason, /trying slot 2 \(tpm\), slot 0 \(nodeid\)/);
  const refused = concludeStateBoot(slots, [
    { slot: 2, kind: "tpm", opened: false, error: "no TPM device (/dev/tpmrm0)" },
    { slot: 0, kind: "nodeid", opened: false },
  ]);
  assert.match(
    refused.state === "locked" ? refused.reason : "",
    /tried slot 2 \(tpm\): no TPM device \(\/dev\/tpmrm0\); slot 0 \(nodeid\): did not open; slot 1 \(static\) need a passphrase/,
  );
});

Deno.test("STATE at boot: no tpm or nodeid slot (a static key only, a foreign slot) is locked at once", () => {
  for (
    const slots of [[{ slot: 1, kind: "static" }], [{ slot: 0, kind: "luks2" }, { slot: 2 }], []]
  ) {
    const d = decideStateBoot(slots);
    assert.equal(d.action, "locked", JSON.stringify(slots));
    assert.match(d.reason, /^STATE is locked: no slot opens from its header's tokens/);
    assert.match(d.reason, /machinectl unlock STATE/);
    assert.match(d.reason, /never formatted/);
  }
  assert.match(
    decideStateBoot([{ slot: 1, kind: "static" }, { slot: 2 }]).reason,
    /slot 1 \(static\), slot 2 \(no token\) need a passphrase/,
  );
});

Deno.test("STATE at boot: the first nodeid slot that opens wins; none opening is locked with each reason", () => {
  const slots = [{ slot: 0, kind: "nodeid" }, { slot: 1, kind: "static" }];
  assert.deepEqual(concludeStateBoot(slots, [{ slot: 0, kind: "nodeid", opened: true }]), {
    state: "unlocked",
    slot: 0,
  });
  const another = concludeStateBoot(slots, [{ slot: 0, kind: "nodeid", opened: false }]);
  assert.equal(another.state, "locked");
  if (another.state === "locked") {
    assert.match(
      another.reason,
      /^STATE is locked: tried slot 0 \(nodeid\): did not open; slot 1 \(static\) need a passphrase/,
    );
  }
  const noUuid = concludeStateBoot(slots, [
    { slot: 0, kind: "nodeid", opened: false, error: "no SMBIOS UUID" },
  ]);
  assert.match(noUuid.state === "locked" ? noUuid.reason : "", /slot 0 \(nodeid\): no SMBIOS UUID/);
});
