/**
 * Issue 25 item 4 for the observability commands: a process's argv and exec
 * path (`ps`), a container's name and image, an image's tag (`containers`,
 * `images`) carry EVIL; tables, JSON and YAML show it escaped, never raw.
 */
import { equal } from "node:assert/strict";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import { clientConfig, runCli } from "./testing.ts";
import { assertEscaped, EVIL } from "./escaping_testing.ts";

async function withNode(test: (f: ApiFixture, config: string) => Promise<void>): Promise<void> {
  const f = await startApiFixture();
  try {
    await test(f, await clientConfig(f, "os:reader"));
  } finally {
    await f.close();
  }
}

Deno.test("ps: argv and an exec path with escapes, in table, json and yaml", () =>
  withNode(async (f, config) => {
    f.proc.addProcess({ pid: 77, ppid: 1, comm: "evil", argv: ["/opt/x\x1b[2J", EVIL] });
    f.proc.addProcess({ pid: 78, ppid: 1, comm: EVIL });
    let r = await runCli(config, "ps");
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text", 2);
    const row = r.out.split("\n").find((l) => l.startsWith("77 "));
    equal(row?.includes(String.raw`/opt/x\x1b[2J x\x1b]0;pwned`), true, row);
    r = await runCli(config, "ps", "-o", "json");
    assertEscaped(r.out, "json", 2);
    equal(
      JSON.parse(r.out).processes.find((p: { pid: number }) => p.pid === 77).args[1],
      EVIL,
      "JSON still parses to the node's value",
    );
    r = await runCli(config, "ps", "-o", "yaml");
    assertEscaped(r.out, "yaml", 2);
  }));

Deno.test("containers and images: names, images and tags with escapes, in table, json and yaml", () =>
  withNode(async (f, config) => {
    f.cri.pods[0] = { ...f.cri.pods[0], name: EVIL };
    f.cri.containers[0] = { ...f.cri.containers[0], name: EVIL, image: EVIL };
    f.cri.images[0] = { ...f.cri.images[0], tags: [EVIL] };
    for (const command of ["containers", "images"]) {
      const want = command === "containers" ? 3 : 1;
      let r = await runCli(config, command);
      equal(r.code, 0, r.err);
      assertEscaped(r.out, "text", want);
      r = await runCli(config, command, "-o", "json");
      assertEscaped(r.out, "json", want);
      r = await runCli(config, command, "-o", "yaml");
      assertEscaped(r.out, "yaml", want);
    }
  }));
