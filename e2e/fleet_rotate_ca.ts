/**
 * rotate-ca as a process inside the fleet's network namespace (the nodes
 * are only reachable there), with a cut: the fleet test runs it once cut
 * before the second phase ("switch") on one node, then again to resume and
 * finish. Its arguments are one JSON object ({@link RotateArgs}); it prints
 * the progress lines and exits 1 with the error when cut.
 */
import { rotateCa } from "../machinectl/mod.ts";

/** What the fleet test passes. */
export interface RotateArgs {
  /** The client config, rewritten in place. */
  config: string;
  /** `address:port` of each node. */
  nodes: string[];
  /** Each node's machine config file. */
  files: string[];
  /** Cut before this node's "switch" step. */
  cutBeforeSwitch?: string;
  /** Drop the old CA. */
  finish: boolean;
}

if (import.meta.main) {
  const a = JSON.parse(Deno.args[0]) as RotateArgs;
  try {
    const result = await rotateCa({
      nodes: a.nodes,
      files: a.files,
      configPath: a.config,
      finish: a.finish,
      out: (l) => console.log(l),
      beforeStep: (n, s) => {
        if (n === a.cutBeforeSwitch && s === "switch") throw new Error(`cut before ${s} on ${n}`);
      },
    });
    console.log(JSON.stringify(result));
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(1);
  }
}
