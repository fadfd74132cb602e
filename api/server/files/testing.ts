/**
 * A node's `/` in a temporary directory for FileList and FileRead tests: logs,
 * STATE with a machine config carrying a CA key and a service env value, a
 * PEM private key, /etc, and a symlink in /var/log that leads to /etc.
 */
import { join } from "node:path";

/** The CA key of the seeded config.yaml: no role may ever read it. */
export const SEEDED_CA_KEY = "c2VjcmV0LWNhLWtleQ==";
/** The env value of the seeded config.yaml: readers may not read it. */
export const SEEDED_ENV_VALUE = "hunter2-token";
/** The body of the seeded PEM private key. */
export const SEEDED_PEM_BODY = "MHcCAQEEIPRIVATEKEYBODY";

/** Writes the sample tree under `root` (created). */
export async function seedFileRoot(root: string): Promise<void> {
  const put = async (path: string, text: string) => {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  };
  await put("/var/log/machined.log", "booted\n");
  await put("/var/log/containerd.log", "ready\n");
  await put("/var/lib/data.txt", "data\n");
  await put("/etc/hostname", "node-1\n");
  await put(
    "/system/state/config.yaml",
    `version: v1alpha1\nmachine:\n  hostname: n\n  ca:\n    crt: CERT\n    key: ${SEEDED_CA_KEY}\n` +
      `  services:\n    - id: app\n      image: app\n      env:\n        TOKEN: ${SEEDED_ENV_VALUE}\n`,
  );
  await put(
    "/system/state/pki/node.key",
    `-----BEGIN EC PRIVATE KEY-----\n${SEEDED_PEM_BODY}\n-----END EC PRIVATE KEY-----\n`,
  );
  await put("/system/state/blob.bin", "\0\x01binary");
  await Deno.symlink(join(root, "etc"), join(root, "var/log/etc-link"));
}
