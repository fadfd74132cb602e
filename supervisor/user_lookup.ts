/**
 * Resolving a service's `user`/`group` names to ids from /etc/passwd and
 * /etc/group at start time (the root filesystem is immutable, so these files
 * are what the image shipped). Numeric ids pass through.
 */

/** A user or group name that does not exist. */
export class UnknownAccountError extends Error {
  override name = "UnknownAccountError";
  constructor(readonly kind: "user" | "group", readonly account: string, readonly file: string) {
    super(`Unknown ${kind} "${account}" (not in ${file})`);
  }
}

/** Finds `name` in a passwd/group-format file: the id in field 3. */
export function lookupId(text: string, name: string): number | undefined {
  for (const line of text.split("\n")) {
    const fields = line.split(":");
    if (fields[0] === name && fields.length >= 3 && /^\d+$/.test(fields[2])) {
      return Number(fields[2]);
    }
  }
  return undefined;
}

/** Resolves a user or group to its numeric id. @throws UnknownAccountError */
export async function resolveAccount(
  kind: "user" | "group",
  account: number | string,
  root = "",
): Promise<number> {
  if (typeof account === "number") return account;
  if (/^\d+$/.test(account)) return Number(account);
  const file = `${root}/etc/${kind === "user" ? "passwd" : "group"}`;
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const id = lookupId(text, account);
  if (id === undefined) throw new UnknownAccountError(kind, account, file);
  return id;
}
