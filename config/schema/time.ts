/**
 * `machine.time`: NTP synchronisation.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { parseIp } from "../../ip/mod.ts";
import { checkWithHint, quote } from "./hints.ts";
import { Duration, isDnsName } from "./primitives.ts";

const NtpServer = v.pipe(
  v.string("expected an NTP server host name or IP address"),
  checkWithHint(
    (s: string) => parseIp(s) !== undefined || isDnsName(s),
    (issue) => `invalid NTP server ${quote(issue.input)}`,
    () => "a DNS name or an IP address, without scheme or port",
  ),
  v.metadata({ docType: "host name or IP address" }),
);

/** `machine.time`. */
export const TimeSchema = mapping({
  disabled: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description("Do not synchronise the clock (e.g. when the hypervisor does)."),
    ),
    false,
  ),
  servers: v.optional(
    v.pipe(
      v.array(NtpServer, "expected a list of NTP servers"),
      v.description("NTP servers, tried in order."),
      v.examples([["pool.ntp.org", "time.cloudflare.com"]]),
    ),
    ["pool.ntp.org"],
  ),
  sync_interval: v.optional(
    v.pipe(
      Duration,
      v.check((ms: number) => ms >= 1000, "sync_interval must be at least 1s"),
      v.description(
        "How often to poll the servers once synchronised. Milliseconds in the parsed config.",
      ),
    ),
    "1024s",
  ),
});

/** A parsed `machine.time` with defaults filled; `sync_interval` in ms. */
export type TimeConfig = v.InferOutput<typeof TimeSchema>;
