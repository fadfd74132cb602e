/**
 * Keeps new code on the one output path: machinectl writes only through the
 * Io that runMachinectl wraps with escapingIo (terminal_text.ts), and prints
 * documents only through toJson/toYaml (document_text.ts). A source scan,
 * so a new command that reaches for console.log or yaml's stringify fails
 * here rather than on an operator's terminal.
 */
import { deepEqual } from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL(".", import.meta.url).pathname;

/**
 * Files allowed to touch the console: the console Io itself, the dashboard's painter, and the
 * no-echo passphrase reader, whose (escaped) prompt shares a line with raw-mode input.
 */
const CONSOLE_ALLOWED = new Set(["io.ts", "dashboard/terminal.ts", "secret_input.ts"]);
/**
 * Files allowed yaml's stringify: the escaping wrapper, and files, not a terminal: the support
 * bundle, rotate-ca's state file, and the file `machinectl edit` opens, which must parse back to the
 * very values shown (yaml writes control characters as double-quoted escapes, so none reaches the
 * editor raw).
 */
const YAML_ALLOWED = new Set([
  "document_text.ts",
  "support/bundle.ts",
  "commands/edit.ts",
  "rotate_ca/rotation_state.ts",
]);

async function sources(dir = ROOT): Promise<{ path: string; text: string }[]> {
  const out: { path: string; text: string }[] = [];
  for await (const e of Deno.readDir(dir)) {
    const full = join(dir, e.name);
    if (e.isDirectory) out.push(...await sources(full));
    else if (e.name.endsWith(".ts") && !/_test\.ts$|testing\.ts$/.test(e.name)) {
      out.push({ path: relative(ROOT, full), text: await Deno.readTextFile(full) });
    }
  }
  return out;
}

Deno.test("machinectl writes only through its escaping Io", async () => {
  const offenders = (await sources())
    .filter((f) => !CONSOLE_ALLOWED.has(f.path))
    .filter((f) =>
      /console\.(log|error|info|warn|debug)\(|Deno\.std(out|err)\.write|process\.std(out|err)/.test(
        f.text.replace(/^\s*(\/\/|\*).*$/gm, ""),
      )
    )
    .map((f) => f.path);
  deepEqual(offenders, []);
});

Deno.test("machinectl prints documents through toJson/toYaml, not JSON.stringify or yaml's stringify", async () => {
  const files = await sources();
  const yaml = files
    .filter((f) =>
      !YAML_ALLOWED.has(f.path) && /import \{[^}]*\bstringify\b[^}]*\} from "yaml"/.test(f.text)
    )
    .map((f) => f.path);
  deepEqual(yaml, []);
  const json = files
    .filter((f) => /\bio\.(out|err)\([^;]*JSON\.stringify/s.test(f.text))
    .map((f) => f.path);
  deepEqual(json, []);
});
