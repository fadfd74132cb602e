/**
 * The image's first command line carries the baked config's
 * `machine.kernel.args` (issue 32): the slots `deno task image` writes boot
 * with them, and under Secure Boot they are inside each signed UKI, the only
 * place a UKI's line can change (the node holds no signing key, and
 * systemd-boot does not let a signed UKI's line be edited at the menu).
 * @module
 */
import { applyKernelArgs, checkCmdlineSize, parseMachineConfig } from "../config/mod.ts";

/**
 * `cmdline` with the args of the config at `configPath` applied. A config
 * that does not parse adds none: the node reports its errors at boot.
 * @throws KernelArgsError when the line would exceed COMMAND_LINE_SIZE.
 */
export async function withBakedKernelArgs(cmdline: string, configPath?: string): Promise<string> {
  if (!configPath) return cmdline;
  const r = parseMachineConfig(await Deno.readTextFile(configPath), configPath);
  if (!r.ok) return cmdline;
  return checkCmdlineSize(applyKernelArgs(cmdline, r.config.machine.kernel.args));
}
