import assert from "node:assert/strict";
import { raspiCommandLine } from "./raspi_vm.ts";

const LINE =
  "console=ttyS1,115200 rdinit=/sbin/machined-init -- /usr/bin/deno run /machined/main.js\n";

Deno.test("raspi3ap's command line skips bcm2835-power's initcall, before machined's arguments", () => {
  assert.equal(
    raspiCommandLine("raspi3ap", LINE),
    "initcall_blacklist=bcm2835_power_driver_init console=ttyS1,115200 " +
      "rdinit=/sbin/machined-init -- /usr/bin/deno run /machined/main.js",
  );
});

Deno.test("raspi3b's command line is the image's", () => {
  assert.equal(raspiCommandLine("raspi3b", LINE), LINE.trim());
});
