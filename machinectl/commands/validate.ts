/** `machinectl validate -c FILE...`: every error with path and line:column. */
import { validateCommand as validateFiles } from "../../config/mod.ts";
import { defineCommand } from "../command.ts";

export const validateCommand = defineCommand({
  name: "validate",
  summary: "Validate machine config files and print every error",
  connects: false,
  flags: {
    config: { kind: "strings", short: "c", value: "FILE", help: "machine config file" },
  },
  run({ flags, args, io }) {
    return validateFiles([...(flags.config ?? []), ...args], { out: io.out, err: io.err });
  },
});
