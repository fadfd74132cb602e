/**
 * Value schemas shared by every config section: durations, byte sizes, names,
 * IP addresses and CIDRs, paths and endpoints. Each one documents itself for
 * the reference generator through `v.metadata({ docType })` and rejects bad
 * input with a message that quotes the value.
 *
 * @module
 */
import * as v from "valibot";
import { formatCidr, networkOf, parseCidr, parseHostPort, parseIp } from "../../ip/mod.ts";
import { suggest } from "../suggest.ts";
import { checkWithHint, quote } from "./hints.ts";

/** Metadata the docs generator reads; `docType` names the type in the reference. */
export type DocMetadata = {
  docType: string;
};

function doc<T>(docType: string): v.MetadataAction<T, DocMetadata> {
  return v.metadata<T, DocMetadata>({ docType });
}

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^(?:[0-9]+(?:ms|s|m|h))+$/;

/** Milliseconds in a duration string such as `"1h30m"`, or `undefined` if malformed. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/([0-9]+)(ms|s|m|h)/g)) total += Number(m[1]) * UNITS_MS[m[2]];
  return Number.isSafeInteger(total) ? total : undefined;
}

/**
 * A duration written as a string of number+unit pairs (`ms`, `s`, `m`, `h`),
 * e.g. `"30s"`, `"5m"`, `"1h30m"`. The parsed config holds milliseconds.
 */
export const Duration = v.pipe(
  v.string('expected a duration string such as "10s", "5m" or "1h"'),
  checkWithHint(
    (s: string) => parseDuration(s) !== undefined,
    (issue) => `invalid duration ${quote(issue.input)}`,
    (s) =>
      /^[0-9]+$/.test(String(s))
        ? `add a unit, e.g. "${s}s"`
        : 'use number+unit pairs: "500ms", "30s", "5m", "1h30m"',
  ),
  v.transform((s) => parseDuration(s) as number),
  doc("duration"),
);

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** Bytes in a size such as `"512Mi"` or `1048576`, or `undefined` if malformed. */
export function parseSize(input: string | number): number | undefined {
  if (typeof input === "number") {
    return Number.isSafeInteger(input) && input >= 0 ? input : undefined;
  }
  const m = /^([0-9]+)(|k|K|M|G|T|Ki|Mi|Gi|Ti)$/.exec(input);
  if (!m) return undefined;
  const bytes = Number(m[1]) * SIZE_UNITS[m[2]];
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A byte count: an integer, or a string with a decimal (k, M, G, T) or binary (Ki, Mi, Gi, Ti) unit. */
export const ByteSize = v.pipe(
  v.union(
    [v.string(), v.number()],
    'expected a size such as "512Mi", "1G" or a number of bytes',
  ),
  checkWithHint(
    (s: string | number) => parseSize(s) !== undefined,
    (issue) => `invalid size ${quote(issue.input)}`,
    () => 'use a whole number of bytes or a unit: "64Ki", "512Mi", "2Gi", "1G"',
  ),
  v.transform((s) => parseSize(s) as number),
  doc("size"),
);

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** True for a lowercase RFC 1123 DNS name of one or more labels, at most `max` characters. */
export function isDnsName(text: string, max = 253): boolean {
  return text.length <= max && text.split(".").every((l) => LABEL.test(l));
}

/** A lowercase RFC 1123 DNS name (one or more labels). */
export function dnsName(max = 253, what = "DNS name") {
  return v.pipe(
    v.string(`expected a ${what} string`),
    checkWithHint(
      (s: string) => isDnsName(s, max),
      (issue) => `invalid ${what} ${quote(issue.input)}`,
      (s) => {
        const t = String(s);
        if (t.length > max) return `at most ${max} characters`;
        if (t !== t.toLowerCase() && isDnsName(t.toLowerCase(), max)) {
          return `use lowercase: "${t.toLowerCase()}"`;
        }
        return "labels of a-z, 0-9 and '-', 1..63 characters, not starting or ending with '-'";
      },
    ),
    doc(what),
  );
}

/** An IPv4 or IPv6 address, strictly parsed; no prefix, no zone. */
export const IpAddressText = v.pipe(
  v.string("expected an IP address string"),
  checkWithHint(
    (s: string) => parseIp(s) !== undefined,
    (issue) => `invalid IP address ${quote(issue.input)}`,
    (s) => String(s).includes("/") ? "an address takes no /prefix here" : undefined,
  ),
  doc("IP address"),
);

/** An interface address `ip/prefix`; host bits may be set (`10.0.0.2/24`). */
export const InterfaceCidr = v.pipe(
  v.string("expected an address/prefix string"),
  checkWithHint(
    (s: string) => parseCidr(s) !== undefined,
    (issue) => `invalid address/prefix ${quote(issue.input)}`,
    (s) => parseIp(String(s)) ? `add a prefix length, e.g. "${s}/24" or "${s}/64"` : undefined,
  ),
  doc("CIDR"),
);

/** A route destination: a network CIDR with zero host bits, or `"default"`. */
export const RouteDestination = v.pipe(
  v.string('expected a CIDR or "default"'),
  checkWithHint(
    (s: string) => s === "default" || parseCidr(s) !== undefined,
    (issue) => `invalid route destination ${quote(issue.input)}`,
    (s) => parseIp(String(s)) ? `add a prefix length, e.g. "${s}/32"` : undefined,
  ),
  checkWithHint(
    (s: string) => {
      const c = s === "default" ? undefined : parseCidr(s);
      return !c || formatCidr(networkOf(c)) === formatCidr(c);
    },
    (issue) => `route destination ${quote(issue.input)} has host bits set`,
    (s) => {
      const c = parseCidr(String(s));
      return c ? `did you mean "${formatCidr(networkOf(c))}"?` : undefined;
    },
  ),
  doc('CIDR or "default"'),
);

/** An absolute filesystem path. */
export function absolutePath(what = "path") {
  return v.pipe(
    v.string(`expected an absolute ${what} string`),
    checkWithHint(
      (s: string) => s.startsWith("/") && !/[\0\n]/.test(s),
      (issue) => `${what} ${quote(issue.input)} is not absolute`,
      (s) => typeof s === "string" && !s.startsWith("/") ? `write "/${s}"` : undefined,
    ),
    doc("absolute path"),
  );
}

/** An `ip:port` or `[ipv6]:port` listen/connect address. */
export const HostPort = v.pipe(
  v.string('expected an address string such as "127.0.0.1:8080"'),
  checkWithHint(
    (s: string) => parseHostPort(s) !== undefined,
    (issue) => `invalid address ${quote(issue.input)}`,
    () => 'use "ip:port" or "[ipv6]:port", e.g. "0.0.0.0:50000" or "[::]:50000"',
  ),
  doc("ip:port"),
);

/**
 * A closed set of strings whose failures suggest the nearest allowed value.
 * Output type is the union of the options.
 */
export function choice<const T extends readonly [string, ...string[]]>(options: T) {
  const list = options.map((o) => `"${o}"`).join(", ");
  return v.pipe(
    v.string(`expected one of ${list}`),
    checkWithHint(
      (s: string) => (options as readonly string[]).includes(s),
      (issue) => `invalid value ${quote(issue.input)}; expected one of ${list}`,
      (s) => {
        const near = suggest(String(s), options);
        return near ? `did you mean "${near}"?` : undefined;
      },
    ),
    v.transform((s) => s as T[number]),
    doc(options.map((o) => `"${o}"`).join(" | ")),
  );
}

/** A user or group: a numeric id (0..4294967294) or a name resolved at start. */
export function userOrGroup(what: "user" | "group") {
  return v.pipe(
    v.union(
      [
        v.pipe(
          v.number(),
          v.check(
            (n: number) => Number.isInteger(n) && n >= 0 && n <= 4294967294,
            (issue) => `invalid ${what} id ${quote(issue.input)}; expected 0..4294967294`,
          ),
        ),
        v.pipe(
          v.string(),
          v.regex(
            /^[a-z_][a-z0-9_-]{0,31}\$?$/,
            (issue) => `invalid ${what} name ${quote(issue.input)}`,
          ),
        ),
      ],
      (issue) => `invalid ${what} ${quote(issue.input)}; expected a numeric id or a ${what} name`,
    ),
    doc(`integer | ${what} name`),
  );
}

/** A positive integer between `min` and `max`, with a message naming the range. */
export function intRange(min: number, max: number, what: string) {
  return v.pipe(
    v.number(`expected ${what} as an integer`),
    v.integer((issue) => `${what} must be an integer, not ${quote(issue.input)}`),
    v.check(
      (n: number) => n >= min && n <= max,
      (issue) => `${what} ${quote(issue.input)} is out of range ${min}..${max}`,
    ),
    doc(`integer (${min}..${max})`),
  );
}
