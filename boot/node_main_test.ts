import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { FakePowerBackend } from "../platform/power/mod.ts";
import { runNode } from "./node_main.ts";

const quietLogger = () => createLogger({ console: false });

Deno.test("runNode: a throwing backend factory leads to the fatal path, not an exception", async () => {
  const power = new FakePowerBackend();
  const fatal: unknown[] = [];
  let booted = false;
  let idled = false;
  const result = await runNode({
    createLogger: quietLogger,
    installGuards: () => {},
    createBackends: () => {
      throw new Error("cannot load machined_native_ops.node");
    },
    bootNode: () => {
      booted = true;
      return Promise.resolve("reboot");
    },
    fallbackPower: () => power,
    fatalReboot: (error, p) => {
      fatal.push(error);
      assert.equal(p, power, "the fatal path gets the fallback power backend");
      return Promise.resolve();
    },
    idle: () => {
      idled = true;
      return Promise.resolve();
    },
  });
  assert.equal(result, 1);
  assert.equal(booted, false);
  assert.equal(fatal.length, 1);
  assert.match(String(fatal[0]), /machined_native_ops/);
  assert.ok(idled, "PID 1 idles rather than returning to main");
});

Deno.test("runNode: when even the fallback power backend cannot load, the fatal path still runs", async () => {
  let reached = false;
  await runNode({
    createLogger: quietLogger,
    installGuards: () => {
      throw new Error("guards");
    },
    createBackends: () => {
      throw new Error("unreachable");
    },
    fallbackPower: () => {
      throw new Error("no addon");
    },
    fatalReboot: async (_e, p) => {
      reached = true;
      await assert.rejects(() => p.restart(), /no addon/);
      throw new Error("the fatal path itself failed");
    },
    idle: () => Promise.resolve(),
  });
  assert.ok(reached);
});
