/**
 * The machine config `deno task up` generates: the whole node in one boot.
 * It installs to the image's own disk (STATE and EPHEMERAL go into the free
 * space after the ESP; the ESP is kept byte for byte, see docs/block.md) and
 * runs a small sample payload, gated on containerd's CRI `RuntimeReady`, so
 * that `get volumestatus` and `get services` show the two things machined
 * exists for.
 */
import { renderConfigTemplate } from "../config/mod.ts";
import type { MachineConfig } from "../config/mod.ts";

/** The disk QEMU attaches the image as (the first virtio disk). */
export const UP_INSTALL_DISK = "/dev/vda";

/** The sample payload's service id. */
export const UP_PAYLOAD_ID = "hello";

/** The port the sample payload serves on inside the guest. */
export const UP_PAYLOAD_PORT = 8080;

/**
 * The sample payload: an HTTP "hello" run by the Deno binary the image ships
 * (the image has no shell or coreutils). It logs one line when it listens
 * and one per request, so `machinectl logs hello` shows it working.
 */
export const UP_PAYLOAD_SCRIPT = [
  `Deno.serve({ hostname: "0.0.0.0", port: ${UP_PAYLOAD_PORT},`,
  ` onListen: (a) => console.log("hello: serving on port " + a.port + ", started after containerd was ready") },`,
  ` (req) => { console.log("hello: " + req.method + " " + new URL(req.url).pathname);`,
  ` return new Response("hello from the machined payload\\n"); });`,
].join("");

/** Renders the up node's config for hostname `name` with the node CA `ca`. */
export function renderUpConfig(
  options: { name: string; ca: { certPem: string; keyPem: string } },
): string {
  return renderConfigTemplate({
    hostname: options.name,
    ca: options.ca,
    certSans: ["127.0.0.1"],
    installDisk: UP_INSTALL_DISK,
    payload: {
      id: UP_PAYLOAD_ID,
      command: ["/usr/bin/deno", "eval", UP_PAYLOAD_SCRIPT],
      // Deno's cache goes to EPHEMERAL; NO_COLOR keeps the log plain.
      env: { DENO_DIR: "/var/cache/deno", NO_COLOR: "1" },
      dependsOnContainerd: true,
    },
  });
}

/**
 * Why a config is not the one {@link renderUpConfig} makes today (a bundle an
 * older `deno task up` generated), or undefined when it is.
 */
export function outdatedUpConfig(config: MachineConfig): string | undefined {
  const m = config.machine;
  const missing: string[] = [];
  if (m.install?.disk !== UP_INSTALL_DISK) missing.push(`machine.install.disk ${UP_INSTALL_DISK}`);
  const payload = m.services.find((s) => s.id === UP_PAYLOAD_ID);
  if (!payload?.depends_on.includes("containerd")) {
    missing.push(`a "${UP_PAYLOAD_ID}" payload depending on containerd`);
  }
  return missing.length > 0 ? `it has no ${missing.join(" and no ")}` : undefined;
}
