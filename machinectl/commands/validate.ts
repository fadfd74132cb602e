/** `machinectl validate -c FILE...`: every error with path and line:column. */
import { validateCommand as validateFiles } from "../../config/mod.ts";
import type { Command } from "../command.ts";

export const validateCommand: Command = {
  name: "validate",
  usage: "validate -c FILE [-c FILE...]",
  summary: "Validate machine config files and print every error",
  connects: false,
  flags: {
    config: { type: "string", short: "c", multiple: true, description: "machine config file" },
  },
  run({ flags, args, io }) {
    return validateFiles([...(flags.config ?? []), ...args], { out: io.out, err: io.err });
  },
};
