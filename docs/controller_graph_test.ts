/**
 * docs/controller-graph.dot and .svg (shown in docs/architecture.md) are the
 * controller graph of the domains a node runs, rendered by `machinectl
 * inspect dependencies`'s DOT writer. This test rebuilds the graph from the
 * same composition (createNodeDomains, over dev mode's backends) and fails
 * when the committed DOT is stale; the SVG is checked to be Graphviz's
 * rendering of it (needs graphviz). Regenerate both with
 * `deno run -A docs/controller_graph_test.ts --write`.
 */
import { equal, ok } from "node:assert/strict";
import { createNodeDomains, devBackends } from "../node/mod.ts";
import { Machined } from "../core/mod.ts";
import { FakeBootCmdlineBackend, FakeSysctlBackend } from "../controllers/kernel/mod.ts";
import { FakeProcBackend } from "../platform/procfs/mod.ts";
import { dependencyDot, renderDot } from "../machinectl/mod.ts";

const DOT = new URL("./controller-graph.dot", import.meta.url);
const SVG = new URL("./controller-graph.svg", import.meta.url);

/** The DOT of a node's controller graph, built without starting anything. */
async function nodeGraphDot(): Promise<string> {
  const machined = new Machined({ mode: "dev", pid1: false });
  const domains = createNodeDomains(machined, devBackends(), {
    autoDhcp: false,
    sysctls: new FakeSysctlBackend(),
    // A node has one (its ESP); dev mode boots no slot, so the graph adds a fake.
    cmdline: {
      proc: new FakeProcBackend(),
      boot: new FakeBootCmdlineBackend({ kind: "none", reason: "graph" }),
    },
    paths: {
      resolvConf: "/nonexistent/resolv.conf",
      trustedRoots: "/nonexistent/ca-certificates.crt",
      containerd: { root: "/nonexistent/r", state: "/nonexistent/s", configPath: "/nonexistent/c" },
    },
  });
  machined.register(domains.controllers);
  try {
    return dependencyDot(machined.runtime.graph().controllers);
  } finally {
    await domains.shutdown();
  }
}

function hasDot(): boolean {
  try {
    return new Deno.Command("dot", { args: ["-V"], stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("docs/controller-graph.dot is the node's controller graph", async () => {
  const dot = await nodeGraphDot();
  equal(
    await Deno.readTextFile(DOT),
    dot,
    "stale: run deno run -A docs/controller_graph_test.ts --write",
  );
  ok(dot.includes('"network.AddressSpecController"'));
});

Deno.test("docs/controller-graph.svg is Graphviz's rendering of it (needs graphviz)", {
  ignore: !hasDot(),
}, async () => {
  const svg = new TextDecoder().decode(await renderDot(await Deno.readTextFile(DOT), "svg"));
  equal(
    await Deno.readTextFile(SVG),
    svg,
    "stale: run deno run -A docs/controller_graph_test.ts --write",
  );
});

if (import.meta.main && Deno.args.includes("--write")) {
  const dot = await nodeGraphDot();
  await Deno.writeTextFile(DOT, dot);
  await Deno.writeFile(SVG, await renderDot(dot, "svg"));
  console.log(`wrote ${DOT.pathname} and ${SVG.pathname}`);
}
