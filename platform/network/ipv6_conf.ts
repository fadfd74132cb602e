/**
 * Per-link IPv6 settings under `/proc/sys/net/ipv6/conf/<link>/`. Only a
 * named link is ever written: `default` and `all` are refused here, at the
 * lowest level, because setting `accept_ra` through them (a Talos failure
 * mode) changes every link, including ones the operator never configured
 * and ones created later. `/proc/sys/net` shows the network namespace of the
 * process that opens it, so a test run under `ip netns exec` sees its own.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";

/** The per-link IPv6 keys machined sets. */
export type Ipv6ConfKey = "accept_ra" | "autoconf";

/** The kernel's interface-name rule, minus the two pseudo-links. */
const LINK = /^[A-Za-z0-9_.@-]{1,15}$/;

/**
 * The file of `key` for `link`.
 * @throws RangeError for `default`, `all` or a name that is not a link name.
 */
export function ipv6ConfPath(root: string, link: string, key: Ipv6ConfKey): string {
  if (!LINK.test(link) || link === "." || link === ".." || link === "all" || link === "default") {
    throw new RangeError(`Refusing IPv6 setting ${key} for "${link}": not a single link`);
  }
  return `${root}/ipv6/conf/${link}/${key}`;
}

/**
 * Read an integer setting.
 * @throws SysError ENODEV when the link (or IPv6 on it) is missing.
 */
export async function readIpv6Conf(root: string, link: string, key: Ipv6ConfKey): Promise<number> {
  const path = ipv6ConfPath(root, link, key);
  try {
    return Number((await Deno.readTextFile(path)).trim());
  } catch (e) {
    throw sysError("read", path, e);
  }
}

/**
 * Write an integer setting.
 * @throws SysError ENODEV when the link (or IPv6 on it) is missing.
 */
export async function writeIpv6Conf(
  root: string,
  link: string,
  key: Ipv6ConfKey,
  value: number,
): Promise<void> {
  const path = ipv6ConfPath(root, link, key);
  try {
    await Deno.writeTextFile(path, `${value}\n`);
  } catch (e) {
    throw sysError("write", path, e);
  }
}

function sysError(op: string, path: string, e: unknown): SysError {
  const code = e instanceof Deno.errors.NotFound
    ? "ENODEV"
    : e instanceof Deno.errors.PermissionDenied
    ? "EACCES"
    : "EIO";
  return new SysError(op, errnoValue(code), path, { cause: e });
}
