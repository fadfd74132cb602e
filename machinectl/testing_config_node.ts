/**
 * A node for machinectl tests of apply-config: machined's real ConfigModes
 * over a ConfigKeeper (booted with `cfg("a")`, STATE in a temp dir) behind
 * apid over mutual TLS, and `run` to call machinectl as its admin. Not for
 * production.
 */
import { join } from "node:path";
import type { Role } from "../pki/mod.ts";
import { startKeeperNode } from "../api/testing_config_node.ts";
import { clientConfig, runCli } from "./testing.ts";

/** A config text with `hostname`, plus `extra` YAML under `machine:`. */
export const cfg = (hostname: string, extra = "") =>
  `version: v1alpha1\nmachine:\n  hostname: ${hostname}\n${extra}`;

/** Starts the node booted with `image`; `close()` stops it and removes its files. */
export async function startConfigNode(image = cfg("a")) {
  const node = await startKeeperNode(image);
  const { f, dir } = node;
  const config = await clientConfig(f, "os:admin");
  const file = async (name: string, text: string) => {
    const p = join(dir, name);
    await Deno.writeTextFile(p, text);
    return p;
  };
  /** machinectl as the admin. */
  const run = (...argv: string[]) => runCli(config, ...argv);
  /** machinectl with a certificate of `role`. */
  const runAs = async (role: Role, ...argv: string[]) =>
    runCli(await clientConfig(f, role), ...argv);
  return { ...node, file, run, runAs };
}
