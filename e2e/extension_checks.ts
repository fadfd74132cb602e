/**
 * The system extension the upgrade case ships (issue 32): a squashfs built
 * here with mksquashfs holding a Deno script (the image has no shell; the
 * script's `#!/usr/bin/deno` line runs it with the image's Deno, with no
 * permissions) and its extension-release file, a service whose `command` is
 * the script under `/opt/extensions/hello`, and the checks through
 * `machinectl`: ExtensionStatus mounted with the file's SHA-256, the service
 * running and its log line naming the path it ran from.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { machinectl, waitForDocs } from "./helpers.ts";

/** The extension's name, version and the service that runs from it. */
export const EXT = { name: "hello", version: "1.0.0", service: "ext-hello" } as const;
/** The program's path on the node. */
export const EXT_COMMAND = `/opt/extensions/${EXT.name}/bin/hello`;

const SCRIPT = `#!/usr/bin/deno
console.log(\`ext-hello \${Deno.version.deno} running from \${import.meta.filename}\`);
setInterval(() => {}, 60_000);
`;

/** Builds the extension under `work`; its path and SHA-256. */
export async function buildHelloExtension(work: string): Promise<{ path: string; sha256: string }> {
  const tree = join(work, "ext-hello");
  await Deno.remove(tree, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(tree, "bin"), { recursive: true });
  await Deno.mkdir(join(tree, "usr/lib/extension-release.d"), { recursive: true });
  await Deno.writeTextFile(join(tree, "bin/hello"), SCRIPT, { mode: 0o755 });
  await Deno.chmod(join(tree, "bin/hello"), 0o755);
  await Deno.writeTextFile(
    join(tree, `usr/lib/extension-release.d/extension-release.${EXT.name}`),
    `ID=machined\nSYSEXT_VERSION_ID=${EXT.version}\n`,
  );
  const path = join(work, "hello.squashfs");
  const r = await new Deno.Command("mksquashfs", {
    args: [tree, path, "-noappend", "-all-root", "-quiet", "-no-progress"],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(r.success, new TextDecoder().decode(r.stderr));
  const sha256 = createHash("sha256").update(await Deno.readFile(path)).digest("hex");
  return { path, sha256 };
}

/** The service of the machine config that runs the extension's program. */
export function extensionService() {
  return {
    id: EXT.service,
    command: [EXT_COMMAND],
    env: { DENO_DIR: "/tmp/deno-ext", NO_COLOR: "1" },
    restart: "always",
    stop_grace_period: "2s",
  };
}

/**
 * Through machinectl: ExtensionStatus lists the extension mounted with
 * `sha256`, its service runs, and its log says it ran from the mount.
 */
export async function assertExtensionRuns(
  client: string,
  port: number,
  sha256: string,
  when: string,
): Promise<void> {
  const [ext] = await waitForDocs(client, port, ["extensions", EXT.name], (d) => d.length === 1);
  assert.deepEqual(
    [ext.spec.version, ext.spec.sha256, ext.spec.state, ext.spec.mountPoint, ext.spec.reason],
    [EXT.version, sha256, "mounted", `/opt/extensions/${EXT.name}`, ""],
    `${when}: ExtensionStatus`,
  );
  await waitForDocs(
    client,
    port,
    ["servicestatus", EXT.service],
    (d) => d[0]?.spec.state === "running",
    120_000,
  );
  const deadline = performance.now() + 60_000;
  let logs = { code: 1, out: "", err: "" };
  while (performance.now() < deadline) {
    logs = await machinectl(client, port, "logs", EXT.service);
    if (logs.out.includes(`running from ${EXT_COMMAND}`)) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  assert.fail(
    `${when}: ${EXT.service}'s log never said it ran from ${EXT_COMMAND}: ${logs.out}${logs.err}`,
  );
}
