/** `machinectl config contexts|use|add|info`: manage the client config's contexts. */
import {
  listContexts,
  mergeClientConfig,
  readClientConfig,
  useContext,
  writeClientConfig,
} from "../../pki/mod.ts";
import { alignTable } from "../output.ts";
import { defineCommand } from "../command.ts";
import { declareFlags } from "../flags.ts";
import { clientConfigPath } from "../connection.ts";
import { CliError } from "../io.ts";

const CONFIG_FLAG = declareFlags({
  config: { kind: "string", value: "FILE", help: "client config file" },
});

export const configContextsCommand = defineCommand({
  name: "config contexts",
  summary: "List the contexts of the client config (* marks the current one)",
  connects: false,
  flags: CONFIG_FLAG,
  async run({ flags, io }) {
    const config = await readClientConfig(clientConfigPath(flags));
    const rows = listContexts(config).map((c) => [
      c.current ? "*" : "",
      c.name,
      c.endpoints.join(","),
    ]);
    io.out(alignTable([["CURRENT", "NAME", "ENDPOINTS"], ...rows]));
    return 0;
  },
});

export const configUseCommand = defineCommand({
  name: "config use",
  args: "NAME",
  summary: "Make a context current",
  connects: false,
  flags: CONFIG_FLAG,
  async run({ flags, args, io }) {
    const [name] = args;
    if (!name) throw new CliError("config use: NAME is required");
    const path = clientConfigPath(flags);
    await writeClientConfig(path, useContext(await readClientConfig(path), name));
    io.out(`current context is now "${name}"`);
    return 0;
  },
});

export const configAddCommand = defineCommand({
  name: "config add",
  args: "FILE",
  summary: "Merge the contexts of another client config into this one",
  connects: false,
  flags: CONFIG_FLAG,
  async run({ flags, args, io }) {
    const [file] = args;
    if (!file) throw new CliError("config add: FILE is required");
    const path = clientConfigPath(flags);
    const { config, renamed } = mergeClientConfig(
      await readClientConfig(path),
      await readClientConfig(file),
    );
    await writeClientConfig(path, config);
    for (const [from, to] of Object.entries(renamed)) {
      io.out(`context "${from}" exists already; added as "${to}"`);
    }
    io.out(`merged ${file} into ${path}; current context is "${config.context}"`);
    return 0;
  },
});
