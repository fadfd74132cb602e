/**
 * `machinectl edit [--mode MODE] [--dry-run]` (admin role): opens $VISUAL or
 * $EDITOR (else vi) on the node's config in force as written, redacted as
 * the caller may see it (MachineConfig's `document`), and on save sends the
 * change as a JSON Patch with the hash it read, so the node applies it over
 * the config in force and the secrets the client never saw stay as they are
 * (a `(redacted)` left alone is not in the patch; one the node would write as
 * the secret is refused). An unchanged file changes nothing. A change the node
 * refuses reopens the editor with the reasons as `#!` comments at the top;
 * quitting without saving then aborts. A config changed on the node since it
 * was read is refused (Aborted): run edit again.
 */
import { Code } from "@connectrpc/connect";
import { join } from "node:path";
import { parseDocument, stringify } from "yaml";
import type { ApplyMode } from "../../api/gen/machined/v1/resources_pb.ts";
import { ConfigPatchType } from "../../api/gen/machined/v1/machine_pb.ts";
import { deepEqual, jsonPatchOf, type JsonValue } from "../../config/mod.ts";
import { defineCommand } from "../command.ts";
import { connectToNode, type NodeConnection } from "../connection.ts";
import { CliError, type Io } from "../io.ts";
import { esc } from "../terminal_text.ts";
import { MODES } from "./apply_config.ts";
import { reportApplied, tryPatches } from "./patch.ts";

/** Marks the lines of the node's reasons at the top of a reopened file. */
const REASON = "#! ";

export const editCommand = defineCommand({
  name: "edit",
  summary: "Edit the node's config in force in $EDITOR; the change is sent as a patch",
  connects: true,
  flags: {
    mode: {
      kind: "enum",
      values: ["auto", "no-reboot", "reboot", "staged", "try"],
      noun: "mode",
      help: "how to apply (default auto)",
    },
    "dry-run": {
      kind: "boolean",
      help: "change nothing; print the diff, domains, hashes and verdict",
    },
  },
  async run({ flags, io }) {
    using conn = await connectToNode(flags);
    const live = await readLive(conn);
    const dir = await Deno.makeTempDir({ prefix: "machinectl-edit-" });
    try {
      const file = join(dir, "config.yaml");
      return await editLoop(conn, io, file, live, {
        mode: MODES[flags.mode ?? "auto"],
        dryRun: !!flags["dry-run"],
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

interface Live {
  readonly document: JsonValue;
  readonly sha256: string;
}

/** The config in force as written and its hash, as the caller's role sees them. */
async function readLive(conn: NodeConnection): Promise<Live> {
  const r = await conn.client.get({ type: "MachineConfig", id: "v1alpha1" }, { timeoutMs: 15_000 });
  const spec = r.resource?.spec.case === "machineConfig" ? r.resource.spec.value : undefined;
  if (!spec?.document) {
    throw new CliError(
      "the node does not send its config as written (an older machined?); use apply-config",
    );
  }
  return { document: spec.document as JsonValue, sha256: spec.sha256 };
}

async function editLoop(
  conn: NodeConnection,
  io: Io,
  file: string,
  live: Live,
  o: { mode: ApplyMode; dryRun: boolean },
): Promise<number> {
  let written = header(conn.endpoint, live.sha256) + stringify(live.document, { lineWidth: 0 });
  let refused = false;
  for (;;) {
    await Deno.writeTextFile(file, written);
    await runEditor(file);
    const saved = await Deno.readTextFile(file);
    if (saved === written) {
      if (!refused) return unchanged(io);
      io.err("edit aborted: the file was not changed after the refusal; nothing was changed");
      return 1;
    }
    const body = withoutReasons(saved);
    const parsed = parseYaml(body);
    let reasons: string[];
    if ("doc" in parsed) {
      if (deepEqual(parsed.doc, live.document)) return unchanged(io);
      const ops = jsonPatchOf(live.document, parsed.doc);
      const got = await tryPatches(conn, {
        patches: [{ type: ConfigPatchType.JSON, text: JSON.stringify(ops) }],
        names: ["the edit"],
        mode: o.mode,
        dryRun: o.dryRun,
        baseSha256: live.sha256,
      });
      if (got.ok) {
        reportApplied(got.response, o.dryRun, conn.endpoint, io);
        return 0;
      }
      if (got.code !== Code.InvalidArgument) {
        for (const line of got.lines) io.err(esc`${line}`);
        io.err("the node kept its config");
        return 1;
      }
      reasons = got.lines;
    } else {
      reasons = [parsed.error];
    }
    refused = true;
    written = reasons.map((r) => REASON + r.replaceAll("\n", " ")).join("\n") + "\n" + body;
  }
}

function unchanged(io: Io): number {
  io.out("no change; nothing was sent");
  return 0;
}

function header(endpoint: string, sha256: string): string {
  return [
    `# machinectl edit: the config in force on ${endpoint} (sha256 ${sha256.slice(0, 12)})`,
    "# Save to apply the change; quit without saving to change nothing.",
    '# "(redacted)" stands for a secret: leave it as it is to keep the secret, or',
    "# write its new value. Defaults left out stay defaults.",
    "",
  ].join("\n");
}

/** The text without the `#!` reasons a previous round put at its top. */
function withoutReasons(text: string): string {
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length && lines[i].startsWith(REASON.trim())) i++;
  return lines.slice(i).join("\n");
}

function parseYaml(text: string): { doc: JsonValue } | { error: string } {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const bad = doc.errors[0];
  if (bad) return { error: `not valid YAML: ${bad.message.split("\n")[0]}` };
  return { doc: (doc.toJS() ?? {}) as JsonValue };
}

/** Runs $VISUAL, else $EDITOR, else vi on `file`, through sh so that "code -w" works. */
async function runEditor(file: string): Promise<void> {
  const editor = Deno.env.get("VISUAL") || Deno.env.get("EDITOR") || "vi";
  const status = await new Deno.Command("sh", {
    args: ["-c", `${editor} "$1"`, "machinectl-edit", file],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) {
    throw new CliError(`the editor "${editor}" exited with ${status.code}; nothing was changed`);
  }
}
