import assert from "node:assert/strict";
import fc from "fast-check";
import { stringify } from "yaml";
import { ConfigError } from "./config_error.ts";
import { formatCidr, formatIp, networkOf, parseCidr, parseIp, parseIpv6 } from "../ip/mod.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";

Deno.test("property: canonical IPv6 text parses back to the same bytes", () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
      const text = formatIp({ family: 6, bytes });
      assert.deepEqual(parseIpv6(text)?.bytes, bytes);
    }),
    { numRuns: 500 },
  );
});

Deno.test("property: the network of a CIDR has zero host bits and is idempotent", () => {
  fc.assert(
    fc.property(fc.ipV4(), fc.integer({ min: 0, max: 32 }), (ip, prefix) => {
      const net = networkOf(parseCidr(`${ip}/${prefix}`)!);
      const again = networkOf(parseCidr(formatCidr(net))!);
      assert.equal(formatCidr(again), formatCidr(net));
    }),
    { numRuns: 300 },
  );
  fc.assert(
    fc.property(fc.ipV6(), (ip) => {
      // fast-check's generator emits forms such as "::1.2.3.4" that are valid RFC 4291 text.
      assert.ok(parseIp(ip), ip);
    }),
    { numRuns: 300 },
  );
});

Deno.test("property: parsing never throws and every error has a position", () => {
  const check = (text: string) => {
    const result = parseMachineConfig(text, "p.yaml");
    if (result.ok) return;
    assert.ok(result.errors.length > 0);
    for (const e of result.errors) {
      assert.ok(e instanceof ConfigError);
      assert.ok(e.line >= 1 && e.column >= 1, e.format());
    }
  };
  fc.assert(fc.property(fc.string({ maxLength: 200 }), check), { numRuns: 300 });
  const value = fc.jsonValue({ maxDepth: 4 });
  const machine = fc.dictionary(
    fc.constantFrom("hostname", "network", "services", "time", "sysctls", "api", "hostnme"),
    value,
  );
  fc.assert(
    fc.property(machine, (m) => check(stringify({ version: "v1alpha1", machine: m }))),
    { numRuns: 300 },
  );
});
