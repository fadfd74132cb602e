/**
 * Test support for encrypted STATE and EPHEMERAL through the block
 * controllers, on fakes: a
 * FakeBlockBackend disk, a LinkedFakeCrypt whose headers show on that disk,
 * mkfs through FakeProcessBackend, mounts through FakeMountBackend. A
 * reboot is a new runtime and controllers over the same disk and headers.
 */
import { configSha256, parseMachineConfig, redactConfigSecrets } from "../../config/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { FakeBlockBackend } from "../../platform/block/mod.ts";
import { FakeMountBackend } from "../../platform/mount/mod.ts";
import { FakeProcessBackend } from "../../platform/process/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  MOUNT_STATUS,
  type ResourceSpecs,
  VOLUME_STATUS,
  type VolumeStatusSpec,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";
import {
  defineFakeMkfs,
  part,
  sequentialGuids,
  TEST_LAYOUT,
  writeFakeSysfs,
} from "./fake_disks.ts";
import { LinkedFakeCrypt } from "./fake_luks.ts";
import type { TpmKeys } from "../../platform/crypt/mod.ts";
import { blockControllers } from "./mod.ts";
import type { VolumeUnlocker } from "./volume_unlock.ts";

export const MiB = 1024 * 1024;
export const DISK = "/dev/vda";
export const UUID = "4c4c4544-0042-3510-8052-b4c04f564433";
export const OTHER_BOARD = "9a1f2e3d-0000-4000-8000-00000000b0a2";
export const PASS = "a long recovery passphrase";

export const PLAIN = `  install:\n    disk: ${DISK}\n`;
export const encrypted = (passphrase = PASS) =>
  PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: nodeid }
          - { slot: 1, kind: static, passphrase: "${passphrase}" }
      ephemeral:
        keys:
          - { slot: 0, kind: nodeid }
`;

export function config(install: string) {
  const r = parseMachineConfig(`version: v1alpha1\nmachine:\n  hostname: n1\n${install}`, "t.yaml");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

export async function sha256(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes.slice());
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The disk, the headers and the temp dir: what survives a reboot. */
export interface Machine {
  block: FakeBlockBackend;
  crypt: LinkedFakeCrypt;
  dir: string;
  /** The board's TPM for `tpm` slots (testing_tpm.ts); none when unset. */
  tpm?: TpmKeys;
}

export async function newMachine(): Promise<Machine> {
  const block = new FakeBlockBackend();
  block.addDisk(DISK, 64 * MiB);
  const esp = part(1, T.EFI_SYSTEM, N.EFI, 1, 8, "e5e5e5e5-0000-4000-8000-000000000001");
  await block.writeGpt(DISK, {
    diskGuid: "d15c0000-0000-4000-8000-000000000001",
    partitions: [esp],
  });
  const dir = await Deno.makeTempDir({ prefix: "block-crypt-" });
  await writeFakeSysfs(`${dir}/sys`, [{ name: "vda", size: 64 * MiB }]);
  return { block, crypt: new LinkedFakeCrypt(block, [DISK]), dir };
}

/** One boot of the node: fresh store, runtime, mounts, processes and events. */
export async function boot(
  m: Machine,
  install: string,
  smbiosUuid = UUID,
  unlocker?: VolumeUnlocker,
  /** As on a node: the store holds the redacted config, `fullConfig` (if given) the secrets. */
  keeper?: { fullConfig?: boolean },
) {
  const mounts = new FakeMountBackend();
  const process = new FakeProcessBackend();
  const events = new EventBus();
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  const ptr = { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID } as const;
  const full = config(install);
  await store.modify(
    ptr,
    "test",
    () =>
      keeper
        ? { source: "test", config: redactConfigSecrets(full), sha256: configSha256(full) }
        : { source: "test", config: full },
  );
  defineFakeMkfs(process, m.block, [DISK]);
  const controllers = blockControllers({
    block: m.block,
    mounts,
    process,
    events,
    crypt: m.crypt,
    keys: { smbiosUuid: () => Promise.resolve(smbiosUuid), ...(m.tpm ? { tpm: m.tpm } : {}) },
    sysfsRoot: `${m.dir}/sys`,
    resyncInterval: 50,
    stateMountPoint: `${m.dir}/system/state`,
    ephemeralMountPoint: `${m.dir}/var`,
    layout: TEST_LAYOUT,
    waitForDevice: () => Promise.resolve(),
    resolveDevice: (p: string) => Promise.resolve(p),
    mkdir: async (p: string) => {
      await Deno.mkdir(p, { recursive: true });
      mounts.addDirectory(p);
    },
    newGuid: sequentialGuids(),
    unlocker,
    ...(keeper?.fullConfig ? { fullConfig: () => full } : {}),
  });
  for (const c of controllers) runtime.register(c);
  runtime.start();
  return {
    store,
    mounts,
    process,
    events,
    status: (id: string, pred: (s: VolumeStatusSpec) => boolean) =>
      waitForResource(store, VOLUME_STATUS, (r) => r.metadata.id === id && pred(r.spec)),
    mounted: (id: string) =>
      waitForResource(store, MOUNT_STATUS, (r) => r.metadata.id === id && r.spec.mounted),
    async shutdown() {
      await runtime.stop();
      await m.crypt.reboot();
    },
  };
}

/** A first boot with encryption configured: both volumes formatted, opened and mounted; then shut down. */
export async function provisionEncrypted(m: Machine): Promise<void> {
  const first = await boot(m, encrypted());
  await first.mounted("STATE");
  await first.mounted("EPHEMERAL");
  await first.shutdown();
}

/** Everything a boot could change: the disk's bytes and every LUKS2 header. */
export async function diskState(m: Machine): Promise<string> {
  const headers = [...m.crypt.headers].map(([d, h]) => [d, [...h.keys], [...h.tokens]]);
  return `${await sha256(m.block.bytes(DISK))} ${JSON.stringify(headers)}`;
}
