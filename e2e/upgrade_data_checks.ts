/**
 * What the QEMU upgrade test (e2e/node_upgrade_test.ts) checks is kept by
 * every case: STATE and EPHEMERAL come back as the same filesystems (same
 * partition and filesystem UUIDs, left rather than made again by the
 * provisioner) after each step's reboots, and a foreign disk attached to the
 * VM is byte-for-byte unchanged at the end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { hashFile } from "../bundle/mod.ts";
import type { VolumeStatusSpec } from "../resources/mod.ts";
import { run } from "../imager/mod.ts";
import { machinectl, parseDocs } from "./helpers.ts";

/** A volume's identity: what a reformat or a new partition would change. */
export interface VolumeIdentity {
  partitionUuid: string;
  filesystemUuid: string;
}

/** STATE's and EPHEMERAL's identities, once both are ready (retried for a minute after a boot). */
export async function volumeIdentities(
  config: string,
  port: number,
): Promise<Record<"STATE" | "EPHEMERAL", VolumeIdentity & { decision: string }>> {
  const end = performance.now() + 60_000;
  let last = "";
  while (performance.now() < end) {
    const r = await machinectl(config, port, "get", "volumestatus", "-o", "json");
    last = r.out + r.err;
    if (r.code === 0) {
      const specs = parseDocs(r.out).map((d) => d.spec as unknown as VolumeStatusSpec);
      const pick = (name: string) => specs.find((s) => s.volume === name && s.phase === "ready");
      const [state, ephemeral] = [pick("STATE"), pick("EPHEMERAL")];
      if (state && ephemeral) {
        const id = (s: VolumeStatusSpec) => ({
          partitionUuid: s.partitionUuid,
          filesystemUuid: s.filesystemUuid,
          decision: s.decision,
        });
        return { STATE: id(state), EPHEMERAL: id(ephemeral) };
      }
    }
    await new Promise((res) => setTimeout(res, 2000));
  }
  throw new Error(`STATE and EPHEMERAL not both ready: ${last}`);
}

/**
 * After a step's reboot: STATE and EPHEMERAL are the filesystems the first
 * boot made (`first`), left this boot rather than created or wiped.
 */
export async function assertVolumesKept(
  config: string,
  port: number,
  first: Record<"STATE" | "EPHEMERAL", VolumeIdentity>,
  step: string,
): Promise<void> {
  const now = await volumeIdentities(config, port);
  for (const name of ["STATE", "EPHEMERAL"] as const) {
    assert.deepEqual(
      { partitionUuid: now[name].partitionUuid, filesystemUuid: now[name].filesystemUuid },
      { partitionUuid: first[name].partitionUuid, filesystemUuid: first[name].filesystemUuid },
      `${step}: ${name} is the same filesystem as on the first boot`,
    );
    assert.equal(now[name].decision, "leave", `${step}: ${name} was left as it was`);
  }
}

/** A 64 MiB ext4 disk with a file on it, and its sha256, to attach as a foreign disk. */
export async function makeForeignDisk(work: string): Promise<{ path: string; sha256: string }> {
  const path = join(work, "foreign.img");
  const content = join(work, "foreign-content");
  await Deno.mkdir(content, { recursive: true });
  await Deno.writeTextFile(join(content, "precious.txt"), "an upgrade must not touch this\n");
  await run("truncate", ["-s", "64M", path]);
  await run("mkfs.ext4", ["-q", "-F", "-L", "foreign", "-d", content, path]);
  return { path, sha256: (await hashFile(path)).sha256 };
}

/** Once the VM has stopped: the foreign disk holds the bytes it had before the first boot. */
export async function assertForeignDiskUnchanged(disk: { path: string; sha256: string }) {
  assert.equal((await hashFile(disk.path)).sha256, disk.sha256, "the foreign disk was not written");
}
