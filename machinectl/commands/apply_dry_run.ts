/**
 * What `machinectl apply-config --dry-run` prints of the node's answer: the
 * changed fields, the domains they touch, both config hashes, the verdict
 * (applied live, reboot, staged, try, or refused by the mode) and the diff of
 * the config in force against the file, which the node sends with every
 * secret already redacted. The exit code is 0 whatever the verdict (a
 * dry run that ran succeeded); only an invalid config exits 1, as without
 * `--dry-run`. Every field came from the node and is escaped.
 */
import type { ApplyConfigurationResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { ApplyMode } from "../../api/gen/machined/v1/resources_pb.ts";
import type { Io } from "../io.ts";
import { esc, escapeText } from "../terminal_text.ts";

/** Prints the dry run's report after its first line (see the module doc). */
export function printDryRun(r: ApplyConfigurationResponse, io: Io): void {
  io.out(`domains: ${r.domains.length ? escapeText(r.domains.join(", ")) : "none"}`);
  io.out(esc`sha256 in force:  ${r.currentSha256 || "(no config in force)"}`);
  io.out(esc`sha256 requested: ${r.requestedSha256}`);
  io.out(`verdict: ${verdict(r)}`);
  if (r.diff === "") return;
  for (const line of r.diff.replace(/\n$/, "").split("\n")) io.out(escapeText(line));
}

/** The first line's middle: what the mode would do, or that it would be refused. */
export function dryRunHeadline(r: ApplyConfigurationResponse, mode: string): string {
  return r.refusal ? `mode ${mode} would be refused` : `would apply with mode ${mode}`;
}

/** What the apply would do; an identical config changes nothing, except a mode that reboots or stages. */
function verdict(r: ApplyConfigurationResponse): string {
  if (r.refusal) return esc`refused: ${r.refusal}`;
  const same = r.differs ? "" : " (the config in force is the same)";
  if (r.reboots) return `would persist it and reboot the node${same}`;
  switch (r.mode) {
    case ApplyMode.STAGED:
      return `would persist it for the next boot; no reboot now${same}`;
    case ApplyMode.TRY:
      return `would apply it live until confirmed or the timeout; no reboot${same}`;
    default:
      return same
        ? "nothing to apply: the config in force is the same"
        : "would apply it live and persist it; no reboot";
  }
}
