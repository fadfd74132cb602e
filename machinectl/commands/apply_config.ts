/**
 * `machinectl apply-config -f FILE [--mode MODE] [--timeout 1m] [--dry-run]`
 * and `machinectl apply-config --confirm` (admin role): sends a machine config
 * to the node, which validates it and puts it in force the way MODE says
 * (auto, no-reboot, reboot, staged, try; docs/api.md). An invalid config
 * changes nothing; every error is printed as `FILE:line:col: path: message
 * (hint)`, as `validate` does, and the exit code is 1. A mode the change does
 * not allow (no-reboot with a reboot-only field) prints the fields, exit 1.
 * `--dry-run` changes nothing and prints what the apply would do
 * (apply_dry_run.ts), exit 0 even when the mode would be refused.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ApplyConfigurationResponse,
  ApplyConfigurationResponseSchema,
} from "../../api/gen/machined/v1/machine_pb.ts";
import type { ConfigIssue } from "../../api/gen/machined/v1/resources_pb.ts";
import { ApplyMode, ConfigState } from "../../api/gen/machined/v1/resources_pb.ts";
import { parseDuration } from "../../config/mod.ts";
import { defineCommand } from "../command.ts";
import { type ConnectionFlags, connectToNode } from "../connection.ts";
import { CliError, type Io } from "../io.ts";
import { esc, escapeText } from "../terminal_text.ts";
import { dryRunHeadline, printDryRun } from "./apply_dry_run.ts";

/** The CLI's mode names ⇄ the proto's. */
export const MODES: Readonly<Record<string, ApplyMode>> = {
  auto: ApplyMode.AUTO,
  "no-reboot": ApplyMode.NO_REBOOT,
  reboot: ApplyMode.REBOOT,
  staged: ApplyMode.STAGED,
  try: ApplyMode.TRY,
};

export const applyConfigCommand = defineCommand({
  name: "apply-config",
  summary: "Send a machine config to the node (modes: auto, no-reboot, reboot, staged, try)",
  connects: true,
  flags: {
    file: { kind: "string", short: "f", help: "machine config file" },
    mode: {
      kind: "enum",
      values: ["auto", "no-reboot", "reboot", "staged", "try"],
      noun: "mode",
      help: "how to apply (default auto)",
    },
    timeout: {
      kind: "string",
      value: "DURATION",
      help: "try only: revert after this long (default 1m)",
    },
    confirm: { kind: "boolean", help: "keep the pending try config (persist it)" },
    "dry-run": {
      kind: "boolean",
      help: "change nothing; print the diff, domains, hashes and verdict (exit 0 unless invalid)",
    },
  },
  async run({ flags, args, io }) {
    if (flags.confirm) return await confirm(flags, args, io);
    const file: string | undefined = flags.file ?? args[0];
    if (!file) throw new CliError(`usage: machinectl ${applyConfigCommand.usage}`, 2);
    const mode = MODES[flags.mode ?? "auto"];
    const tryTimeoutMs = timeoutOf(flags.timeout, mode);
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      throw new CliError(`cannot read "${file}": ${(e as Error).message}`);
    }
    const dryRun = !!flags["dry-run"];
    using conn = await connectToNode(flags);
    let errors: readonly ConfigIssue[];
    try {
      const r = await conn.client.applyConfiguration(
        { configYaml: text, dryRun, mode, tryTimeoutMs },
        { timeoutMs: 60_000 },
      );
      if (r.state === ConfigState.VALID) {
        const used = modeName(r.mode);
        io.out(
          dryRun
            ? `${file}: valid; ${
              dryRunHeadline(r, used)
            }; nothing changed (dry run on ${conn.endpoint})`
            : `${file}: applied with mode ${used} on ${conn.endpoint}`,
        );
        printChanged(r, io);
        if (dryRun) printDryRun(r, io);
        return 0;
      }
      errors = r.errors;
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.FailedPrecondition) {
        return refusedMode(file, e, io);
      }
      const details = e instanceof ConnectError && e.code === Code.InvalidArgument
        ? e.findDetails(ApplyConfigurationResponseSchema)
        : [];
      if (details.length === 0) throw e;
      errors = details[0].errors;
    }
    printErrors(file, errors, dryRun, io);
    return 1;
  },
});

async function confirm(
  flags: ConnectionFlags & { file?: string; mode?: string; "dry-run": boolean },
  args: readonly string[],
  io: Io,
): Promise<number> {
  if (flags.file || args.length > 0 || flags.mode || flags["dry-run"]) {
    throw new CliError(
      `--confirm takes no file, mode or --dry-run\nusage: machinectl ${applyConfigCommand.usage}`,
      2,
    );
  }
  using conn = await connectToNode(flags);
  try {
    const r = await conn.client.applyConfiguration({ confirm: true }, { timeoutMs: 60_000 });
    io.out(`the try config is confirmed and persisted on ${conn.endpoint}`);
    printChanged(r, io);
    return 0;
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.FailedPrecondition) {
      io.err(escapeText(e.rawMessage));
      return 1;
    }
    throw e;
  }
}

/** `--timeout` in ms (try only); 0 lets the node pick its default. */
function timeoutOf(flag: string | undefined, mode: ApplyMode): number {
  if (flag === undefined) return 0;
  if (mode !== ApplyMode.TRY) {
    throw new CliError(
      `--timeout is for --mode try only\nusage: machinectl ${applyConfigCommand.usage}`,
      2,
    );
  }
  const ms = parseDuration(flag);
  if (ms === undefined || ms <= 0) {
    throw new CliError(`invalid --timeout "${flag}" (expected a duration such as 30s or 2m)`, 2);
  }
  return ms;
}

export function modeName(m: ApplyMode): string {
  return Object.entries(MODES).find(([, v]) => v === m)?.[0] ?? "auto";
}

export function printChanged(r: ApplyConfigurationResponse, io: Io): void {
  if (r.changed.length === 0) io.out("changed: nothing");
  for (const p of r.changed) {
    io.out(esc`changed: ${p}` + (r.rebootFields.includes(p) ? " (needs a reboot)" : ""));
  }
}

export function refusedMode(file: string, e: ConnectError, io: Io): number {
  io.err(esc`${file}: ${e.rawMessage}`);
  const d = e.findDetails(ApplyConfigurationResponseSchema)[0];
  for (const p of d?.rebootFields ?? []) io.err(esc`${file}: needs a reboot: ${p}`);
  io.err(`${file}: the node kept its config; use --mode reboot, staged or auto`);
  return 1;
}

function printErrors(file: string, errors: readonly ConfigIssue[], dryRun: boolean, io: Io): void {
  for (const e of errors) {
    io.err(
      esc`${file}:${e.line}:${e.column}: ${e.path || "(document)"}: ${e.message}` +
        (e.hint ? esc` (${e.hint})` : ""),
    );
  }
  const n = errors.length;
  io.err(
    `${file}: ${n} error${n === 1 ? "" : "s"}; the node ${
      dryRun ? "would refuse this config" : "refused it and kept its config"
    }`,
  );
}
