import assert from "node:assert/strict";
import { createLogger } from "../../logs/mod.ts";
import { applyConfigText } from "./config_loader.ts";
import { followLoggingConfig } from "./logging_config.ts";
import { Machined } from "../../core/mod.ts";

const config = (logging: string) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n  logging:\n${logging}`;

async function until(pred: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(pred(), "condition not reached");
}

Deno.test("machine.logging.level filters machined's logger, live on a config change", async () => {
  const logger = createLogger({ console: false });
  const m = new Machined({ mode: "dev", pid1: false, logger });
  const sizes: number[] = [];
  const stop = followLoggingConfig(m.store, {
    logger,
    supervisor: { setRingLines: (n) => void sizes.push(n) },
  });
  try {
    logger.info("t", "before");
    await applyConfigText(m.store, config("    level: warn\n    ring_lines: 100\n"), "a.yaml");
    await until(() => logger.level === "warn");
    logger.info("t", "hidden");
    logger.warn("t", "shown");
    const texts = logger.ring.tail().map((l) => l.text);
    assert.ok(texts.some((t) => t.includes("before")));
    assert.ok(!texts.some((t) => t.includes("hidden")), "info is filtered at level warn");
    assert.ok(texts.some((t) => t.includes("shown")));
    assert.deepEqual(sizes, [100], "ring_lines reaches the service rings");

    await applyConfigText(m.store, config("    level: debug\n    ring_lines: 5000\n"), "b.yaml");
    await until(() => logger.level === "debug");
    logger.log("debug", "t", "now visible");
    assert.ok(logger.ring.tail().some((l) => l.text.includes("now visible")));
    assert.deepEqual(sizes, [100, 5000]);
  } finally {
    stop();
  }
});
