/**
 * machinectl, as a library: the dispatcher, the output formatters and the
 * connection helper, so tests and other tools can drive it.
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
export { bufferIo, CliError, consoleIo, type Io } from "./io.ts";
export { alignTable, formatResources, type OutputFormat, plain } from "./output.ts";
export { connectToNode, type NodeConnection } from "./connection.ts";
export { describeError } from "./errors.ts";
export { dependencyDot, renderDot } from "./dependency_dot.ts";
export { readTarGz, tar } from "./support/tar.ts";
