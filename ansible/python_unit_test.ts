/**
 * The collection's Python unit tests (ansible/tests/unit, stdlib unittest)
 * run once when this module loads, each registered here as its own Deno test
 * so `deno task test` counts them one by one. They need python3 (>= 3.9) and
 * PyYAML for the client-config tests (ansible-core's own dependency): the
 * .ci/ansible-venv interpreter when .ci/install.sh made it, else python3.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const VENV_PYTHON = join(ROOT, ".ci", "ansible-venv", "bin", "python");
const RUNNER = join(ROOT, "ansible", "tests", "unit", "run.py");

interface Row {
  id: string;
  status: "ok" | "fail" | "error" | "skip";
  detail: string;
}

async function runPython(): Promise<{ rows: Row[]; problem?: string }> {
  const python = existsSync(VENV_PYTHON) ? VENV_PYTHON : "python3";
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(python, {
      args: [RUNNER],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(300_000),
    }).output();
  } catch (e) {
    return { rows: [], problem: `cannot run ${python}: ${(e as Error).message}` };
  }
  const text = new TextDecoder().decode(out.stdout);
  const rows = text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Row);
  if (rows.length === 0) {
    const err = new TextDecoder().decode(out.stderr);
    return { rows, problem: `${python} ran no tests (exit ${out.code}): ${err.slice(-2000)}` };
  }
  return { rows };
}

const { rows, problem } = await runPython();

if (problem !== undefined) {
  // Not ignored: python3 is on every machine the project supports, so a
  // runner that cannot start is a failure to see.
  Deno.test("ansible collection: Python unit tests run", () => {
    throw new Error(problem);
  });
}

for (const row of rows) {
  Deno.test({
    name: `ansible collection (python): ${row.id}` +
      (row.status === "skip" ? ` (${row.detail})` : ""),
    ignore: row.status === "skip",
    fn() {
      if (row.status !== "ok") throw new Error(`${row.status}:\n${row.detail}`);
    },
  });
}
