/**
 * The minimal /etc the node needs: users and groups (root, and the
 * unprivileged `machined-api` user the API server drops to), name-service
 * switch for glibc and hosts. (/etc/resolv.conf is a link to /run/resolv.conf,
 * which machined rewrites: the root image is read-only.)
 */

/** UID and GID of the unprivileged API user. */
export const MACHINED_API_UID = 50000;

/** Path → contents of the static /etc files. */
export function etcFiles(): Record<string, string> {
  const uid = MACHINED_API_UID;
  return {
    "/etc/passwd": "root:x:0:0:root:/root:/sbin/nologin\n" +
      `machined-api:x:${uid}:${uid}:machined API:/nonexistent:/sbin/nologin\n`,
    "/etc/group": `root:x:0:\nmachined-api:x:${uid}:\n`,
    "/etc/nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n",
    "/etc/hosts": "127.0.0.1 localhost\n::1 localhost\n",
    "/etc/os-release":
      'NAME="machined"\nID=machined\nPRETTY_NAME="machined"\nHOME_URL="https://example.invalid/machined"\n',
  };
}
