import { deepEqual, equal, match } from "node:assert/strict";
import fc from "fast-check";
import { parse } from "yaml";
import { renderPatched } from "./render_patched.ts";
import type { JsonValue } from "./json_value.ts";
import { applyMergePatch } from "./merge_patch.ts";

const BASE = `# the lab's node: ask Ann before changing
version: v1alpha1
machine:
  hostname: a # short on purpose
  sysctls:
    vm.swappiness: 10
  services:
    - id: web # the one that matters
      command: [/bin/web]
    - id: db
      command: [/bin/db]
`;

Deno.test("a patch keeps the comments, order and spelling of the text in force", () => {
  const before = parse(BASE) as JsonValue;
  const after = applyMergePatch(before, {
    machine: { hostname: "b", sysctls: { "vm.swappiness": null, "net.x": 1 } },
  });
  const r = renderPatched(BASE, before, after);
  equal(r.inPlace, true);
  match(r.text, /^# the lab's node: ask Ann before changing\n/);
  match(r.text, /hostname: b # short on purpose\n/);
  match(r.text, /- id: web # the one that matters\n/);
  match(r.text, /command: \[ ?\/bin\/web ?\]/);
  deepEqual(parse(r.text), after);
  // A list item removed and one inserted, in place.
  const services = (after as { machine: { services: JsonValue[] } }).machine.services;
  const fewer = {
    ...(after as object),
    machine: {
      ...(after as { machine: object }).machine,
      services: [{ id: "x", command: ["/bin/x"] }, services[1]],
    },
  } as JsonValue;
  const r2 = renderPatched(r.text, after, fewer);
  equal(r2.inPlace, true);
  deepEqual(parse(r2.text), fewer);
});

Deno.test("aliases fall back to a fresh rendering, which is still exact", () => {
  const text = "version: v1alpha1\nmachine:\n  hostname: &h a\n  domainname: *h\n";
  const before = parse(text) as JsonValue;
  const after = applyMergePatch(before, { machine: { hostname: "b" } });
  const r = renderPatched(text, before, after);
  equal(r.inPlace, false);
  deepEqual(parse(r.text), after);
});

Deno.test("property: whatever the change, the text parses back to the patched document", () => {
  const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;
  const objects = fc.dictionary(fc.string({ maxLength: 3 }), json, { maxKeys: 4 });
  fc.assert(
    fc.property(objects, objects, (a, b) => {
      const text = `# note\n${JSON.stringify(a)}\n`;
      const r = renderPatched(text, a, b);
      const back = parse(r.text) ?? {};
      // null members are dropped as empty entries by the config parser; compare without them.
      deepEqual(strip(back), strip(b));
    }),
    { numRuns: 300 },
  );
});

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (typeof v === "object" && v !== null) {
    return Object.fromEntries(
      Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, strip(x)]),
    );
  }
  return v;
}
