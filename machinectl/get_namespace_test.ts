/**
 * `-n` is the global `--nodes` everywhere, `get` included; the namespace is
 * `--namespace` (no short form, as in talosctl). Issue 26: `get ms -n runtime`
 * used to be ambiguous between the two.
 */
import { equal, match } from "node:assert/strict";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import { clientConfig, runCli } from "./testing.ts";

async function withNode(test: (f: ApiFixture, config: string) => Promise<void>): Promise<void> {
  const f = await startApiFixture();
  try {
    await test(f, await clientConfig(f, "os:reader"));
  } finally {
    await f.close();
  }
}

Deno.test("get -n NODE is read as nodes: the table gets a NODE column naming it", () =>
  withNode(async (f, config) => {
    const r = await runCli(config, "get", "ms", "-n", f.endpoint);
    equal(r.code, 0, r.err);
    match(r.out, /^NODE\s+/);
    match(r.out, new RegExp(`^${f.endpoint.replace(/[.[\]]/g, "\\$&")}\\s+`, "m"));
  }));

Deno.test("get -n runtime dials a node called runtime, not the namespace", () =>
  withNode(async (_f, config) => {
    const r = await runCli(config, "get", "ms", "-n", "runtime");
    equal(r.code, 1);
    match(r.err, /runtime/);
    equal(r.out.includes("machine"), false, "nothing listed from the namespace");
  }));

Deno.test("get --namespace picks the namespace; a wrong one lists nothing", () =>
  withNode(async (_f, config) => {
    let r = await runCli(config, "get", "ms", "--namespace", "runtime");
    equal(r.code, 0, r.err);
    match(r.out, /^runtime\s+MachineStatus\s+machine\s+/m);
    r = await runCli(config, "get", "ms", "--namespace", "network");
    equal(r.code, 0, r.err);
    match(r.err, /no MachineStatus resources in namespace "network"/);
  }));
