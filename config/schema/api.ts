/**
 * `machine.api` and `machine.logging`: the management API endpoint and the
 * in-memory log ring.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { parseIp } from "../../ip/mod.ts";
import { checkWithHint, quote } from "./hints.ts";
import { choice, HostPort, intRange, isDnsName } from "./primitives.ts";

const CertSan = v.pipe(
  v.string("expected a DNS name or IP address"),
  checkWithHint(
    (s: string) => parseIp(s) !== undefined || isDnsName(s.replace(/^\*\./, "")),
    (issue) => `invalid certificate SAN ${quote(issue.input)}`,
    () => "a DNS name (optionally *.wildcard) or an IP address",
  ),
);

/**
 * Where the API listens when `machine.api.listen` is unset: every address, port
 * 50000. One constant, so the schema, the template and boot agree.
 */
export const DEFAULT_API_LISTEN = "0.0.0.0:50000";

/** `machine.api`. */
export const ApiSchema = mapping({
  listen: v.optional(
    v.pipe(HostPort, v.description("Address the mutual-TLS API listens on.")),
    DEFAULT_API_LISTEN,
  ),
  cert_sans: v.optional(
    v.pipe(
      v.array(CertSan, "expected a list of DNS names or IP addresses"),
      v.description(
        "Extra subject alternative names for the API server certificate, besides the hostname and the node's addresses.",
      ),
      v.examples([["node-1.example.org", "203.0.113.10"]]),
    ),
    [],
  ),
  max_message_bytes: v.optional(
    v.pipe(
      intRange(1024, 268435456, "max_message_bytes"),
      v.description("Largest request or response message accepted, in bytes."),
    ),
    4194304,
  ),
  max_concurrent_streams: v.optional(
    v.pipe(
      intRange(1, 10000, "max_concurrent_streams"),
      v.description("HTTP/2 streams allowed at once per connection."),
    ),
    100,
  ),
});

/** `machine.logging`. */
export const LoggingSchema = mapping({
  level: v.optional(
    v.pipe(
      choice(["debug", "info", "warn", "error"]),
      v.description(
        "machined's own log level: messages below it are dropped (console and `machinectl logs machined`). A change applies at once.",
      ),
    ),
    "info",
  ),
  ring_lines: v.optional(
    v.pipe(
      intRange(100, 1000000, "ring_lines"),
      v.description(
        "Lines kept in memory per service for `machinectl logs`. A change resizes every service's ring at once (shrinking keeps the newest lines).",
      ),
    ),
    2000,
  ),
});

/** A parsed `machine.api`. */
export type ApiConfig = v.InferOutput<typeof ApiSchema>;
/** A parsed `machine.logging`. */
export type LoggingConfig = v.InferOutput<typeof LoggingSchema>;
