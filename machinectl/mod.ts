/**
 * machinectl, as a library: the dispatcher, the output formatters and the
 * connection helper, so tests and other tools can drive it.
 *
 * Adding a command: write it with {@link defineCommand} in `commands/` (its
 * name, positionals as `args`, summary, whether it `connects` to a node, and
 * its flags declared once: kind, short form, default, one line of help) and
 * list it in `COMMANDS` (cli.ts). Its handler's `flags` are typed from that
 * declaration; the usage line, `--help`, docs/cli.md (`deno task docs:cli`)
 * and shell completion are derived from it, and the parser refuses any flag
 * it does not declare. The global connection flags (`CONNECTION_FLAGS`) come
 * with `connects: true`.
 *
 * @example
 * ```ts
 * import { bufferIo, runMachinectl } from "./machinectl/mod.ts";
 * const io = bufferIo();
 * const code = await runMachinectl(["validate", "-c", "machine.yaml"], io);
 * ```
 * @module
 */
export { COMMANDS, runMachinectl, type RunOptions } from "./cli.ts";
export {
  type Command,
  type CommandSpec,
  CONNECTION_FLAGS,
  defineCommand,
  type Invocation,
} from "./command.ts";
export { declareFlags, type FlagDecl, type FlagDecls, type ParsedFlags } from "./flags.ts";
export { bufferIo, CliError, consoleIo, type Io } from "./io.ts";
export { alignTable, formatResources, type OutputFormat, plain } from "./output.ts";
export { connectToNode, type NodeConnection } from "./connection.ts";
export { describeError } from "./errors.ts";
export { dependencyDot, renderDot } from "./dependency_dot.ts";
export { readTarGz, tar } from "./support/tar.ts";
/** CA rotation as a library, for the QEMU fleet test that runs it inside its network namespace with a cut. */
export { rotateCa, type RotateCaOptions } from "./rotate_ca/mod.ts";
