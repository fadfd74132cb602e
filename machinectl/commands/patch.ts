/**
 * `machinectl patch -p FILE [-p FILE...] [--type json|merge] [--mode MODE]
 * [--dry-run] [--base-hash SHA256]` (admin role): sends config patches (RFC
 * 6902 JSON Patch or RFC 7386 merge patch, as JSON or YAML) that the node
 * applies in order to the config in force, secrets included, then validates
 * and applies as `apply-config` does. A patch that cannot apply is named by
 * its file, operation and pointer; with `--base-hash` a node whose config in
 * force has another hash refuses it (the config changed since it was read).
 * Exit 0 when applied (or dry-run), 1 when refused.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ApplyConfigurationResponse,
  ApplyConfigurationResponseSchema,
  ConfigPatchType,
} from "../../api/gen/machined/v1/machine_pb.ts";
import { type ApplyMode, ConfigState } from "../../api/gen/machined/v1/resources_pb.ts";
import { defineCommand } from "../command.ts";
import { connectToNode, type NodeConnection } from "../connection.ts";
import { CliError, type Io } from "../io.ts";
import { esc } from "../terminal_text.ts";
import { modeName, MODES, printChanged, refusedMode } from "./apply_config.ts";
import { dryRunHeadline, printDryRun } from "./apply_dry_run.ts";

const TYPES: Readonly<Record<string, ConfigPatchType>> = {
  json: ConfigPatchType.JSON,
  merge: ConfigPatchType.MERGE,
};

export const patchCommand = defineCommand({
  name: "patch",
  summary: "Patch the node's config in force (JSON Patch or merge patch, JSON or YAML)",
  connects: true,
  args: "[FILE...]",
  flags: {
    "patch-file": {
      kind: "strings",
      short: "p",
      value: "FILE",
      help: "a patch file (JSON or YAML), applied in order; repeatable",
    },
    type: {
      kind: "enum",
      values: ["json", "merge"],
      noun: "patch type",
      help: "json (RFC 6902) or merge (RFC 7386); default: a list is json, an object merge",
    },
    mode: {
      kind: "enum",
      values: ["auto", "no-reboot", "reboot", "staged", "try"],
      noun: "mode",
      help: "how to apply (default auto)",
    },
    "dry-run": {
      kind: "boolean",
      help: "change nothing; print the diff, domains, hashes and verdict (exit 0 unless invalid)",
    },
    "base-hash": {
      kind: "string",
      value: "SHA256",
      help: "refuse unless the config in force has this sha256 (get machineconfig -o yaml)",
    },
  },
  async run({ flags, args, io }) {
    const files = [...(flags["patch-file"] ?? []), ...args];
    if (files.length === 0) throw new CliError(`usage: machinectl ${patchCommand.usage}`, 2);
    const type = flags.type ? TYPES[flags.type] : ConfigPatchType.UNSPECIFIED;
    const patches = await Promise.all(files.map(async (file) => {
      try {
        return { type, text: await Deno.readTextFile(file) };
      } catch (e) {
        throw new CliError(`cannot read "${file}": ${(e as Error).message}`);
      }
    }));
    using conn = await connectToNode(flags);
    return await sendPatches(conn, io, {
      patches,
      names: files,
      mode: MODES[flags.mode ?? "auto"],
      dryRun: !!flags["dry-run"],
      baseSha256: flags["base-hash"] ?? "",
    });
  },
});

/** What {@link sendPatches} sends, and what each patch is called in messages. */
export interface PatchRequest {
  readonly patches: { type: ConfigPatchType; text: string }[];
  /** One per patch: the node's "patch N" becomes this name. */
  readonly names: readonly string[];
  readonly mode: ApplyMode;
  readonly dryRun: boolean;
  readonly baseSha256: string;
}

/** The outcome of {@link sendPatches}: applied, or refused with the lines to show. */
export type PatchOutcome =
  | { ok: true; response: ApplyConfigurationResponse }
  | { ok: false; code: Code; lines: string[] };

/** Sends the patches; a refusal of the node is returned with its lines, anything else throws. */
export async function tryPatches(conn: NodeConnection, r: PatchRequest): Promise<PatchOutcome> {
  try {
    const { patches, mode, dryRun, baseSha256 } = r;
    const response = await conn.client.applyConfiguration(
      { patches, mode, dryRun, baseSha256 },
      { timeoutMs: 60_000 },
    );
    if (response.state === ConfigState.VALID) return { ok: true, response };
    return { ok: false, code: Code.InvalidArgument, lines: issueLines(response) };
  } catch (e) {
    if (!(e instanceof ConnectError)) throw e;
    if (e.code === Code.InvalidArgument) {
      const d = e.findDetails(ApplyConfigurationResponseSchema)[0];
      const lines = d ? issueLines(d) : [named(e.rawMessage, r.names)];
      return { ok: false, code: e.code, lines };
    }
    if (e.code === Code.Aborted || e.code === Code.FailedPrecondition) {
      return { ok: false, code: e.code, lines: [e.rawMessage] };
    }
    throw e;
  }
}

async function sendPatches(conn: NodeConnection, io: Io, r: PatchRequest): Promise<number> {
  const got = await tryPatches(conn, r);
  if (got.ok) {
    reportApplied(got.response, r.dryRun, conn.endpoint, io);
    return 0;
  }
  if (got.code === Code.FailedPrecondition) {
    return refusedMode("patched config", new ConnectError(got.lines[0], got.code), io);
  }
  for (const line of got.lines) io.err(esc`${line}`);
  io.err(
    r.dryRun
      ? "the node would refuse these patches"
      : "the node refused the patches and kept its config",
  );
  return 1;
}

/** What an accepted patch prints: the headline, the changed fields and, for a dry run, the report. */
export function reportApplied(
  r: ApplyConfigurationResponse,
  dryRun: boolean,
  endpoint: string,
  io: Io,
): void {
  const used = modeName(r.mode);
  io.out(
    dryRun
      ? `patched config: valid; ${
        dryRunHeadline(r, used)
      }; nothing changed (dry run on ${endpoint})`
      : `patched config: applied with mode ${used} on ${endpoint}`,
  );
  printChanged(r, io);
  if (dryRun) printDryRun(r, io);
}

/** The node's "patch N" named by the file it came from. */
function named(message: string, names: readonly string[]): string {
  return message.replace(/^patch (\d+)/, (m, i) => names[Number(i)] ?? m);
}

/** The errors of the patched config, by path (their lines are of a text the caller never saw). */
function issueLines(r: ApplyConfigurationResponse): string[] {
  return r.errors.map((e) =>
    `${e.path || "(document)"}: ${e.message}${e.hint ? ` (${e.hint})` : ""}`
  );
}
