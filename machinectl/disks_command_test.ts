/** machinectl disks against the real edge and machined-side server, from DiskStatus and DiscoveredVolume. */
import { equal, match, ok } from "node:assert/strict";
import { startApiFixture } from "../api/testing.ts";
import type { DiscoveredVolumeSpec, DiskStatusSpec } from "../resources/mod.ts";
import { clientConfig, runCli as run } from "./testing.ts";

const DISK: DiskStatusSpec = {
  devicePath: "/dev/vda",
  dev: "253:0",
  size: 8 * 1024 ** 3,
  logicalSectorSize: 512,
  physicalSectorSize: 512,
  model: "QEMU \x1b[2J disk",
  serial: "SN1",
  wwid: "",
  rotational: false,
  readOnly: false,
  removable: false,
  kind: "virtual",
  backingFile: "",
  partitionTable: "gpt",
  diskGuid: "g",
  partitions: 2,
  layout: "machined",
  error: "",
};

function volume(n: number, label: string, fs: string, role: string): DiscoveredVolumeSpec {
  return {
    disk: "vda",
    devicePath: `/dev/vda${n}`,
    partitionNumber: n,
    offset: n * 1024 ** 2,
    size: 1024 ** 3,
    partitionType: "t",
    partitionUuid: "u",
    partitionLabel: label,
    role,
    filesystem: fs,
    filesystemLabel: "",
    filesystemUuid: "",
    inKernel: true,
  } as DiscoveredVolumeSpec;
}

Deno.test("machinectl disks: each disk with its partitions under it, escaped (reader)", async () => {
  const f = await startApiFixture();
  try {
    const put = (type: "DiskStatus" | "DiscoveredVolume", id: string, spec: unknown) =>
      f.store.create({ type, namespace: "block", id, owner: "test", spec } as never);
    put("DiskStatus", "vda", DISK);
    put("DiscoveredVolume", "vda2", volume(2, "STATE", "xfs", "state"));
    put("DiscoveredVolume", "vda1", volume(1, "EFI", "vfat", "esp"));
    const r = await run(await clientConfig(f, "os:reader"), "disks");
    equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    match(lines[0], /^NAME\s+SIZE\s+KIND\s+MODEL\s+SERIAL\s+TABLE\/FS\s+LABEL\s+ROLE$/);
    match(lines[1], /^vda\s+8(\.0)? GiB\s+virtual\s+QEMU \\x1b\[2J disk\s+SN1\s+gpt \(machined\)/);
    match(lines[2], /^ {2}vda1\s+1(\.0)? GiB\s+part\s+vfat\s+EFI\s+esp$/);
    match(lines[3], /^ {2}vda2\s+.*xfs\s+STATE\s+state$/);
    ok(!r.out.includes("\x1b"));
    const j = await run(await clientConfig(f, "os:reader"), "disks", "-o", "json");
    equal(JSON.parse(j.out)[0].volumes.length, 2);
  } finally {
    await f.close();
  }
});
