/**
 * The provisioning record file on STATE (`provisioned.json`): parse it
 * strictly, merge what this boot created into it (pure), and replace it
 * atomically (write, fsync, rename) so a crash leaves the old or the new
 * record, never half of one.
 * @module
 */
import type { CreatedPartition, ProvisioningRecordSpec } from "../../resources/mod.ts";

/** The file's content (the resource without where it lives). */
export type RecordContent = Omit<ProvisioningRecordSpec, "path">;

/** The record file exists but is not a valid record. */
export class RecordFileError extends Error {
  override name = "RecordFileError";
  constructor(readonly path: string, readonly problem: string) {
    super(`Provisioning record "${path}" is invalid: ${problem}`);
  }
}

/** What this boot created on one disk. */
export interface CreatedOnDisk {
  disk: string;
  diskGuid: string;
  partitions: readonly CreatedPartition[];
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Parse and validate the file's text. @throws RecordFileError */
export function parseRecord(path: string, text: string): RecordContent {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new RecordFileError(path, `not JSON (${(e as Error).message})`);
  }
  const r = raw as Record<string, unknown>;
  if (typeof r !== "object" || r === null || r.version !== 1) {
    throw new RecordFileError(path, "version is not 1");
  }
  if (typeof r.disk !== "string" || typeof r.diskGuid !== "string" || !GUID.test(r.diskGuid)) {
    throw new RecordFileError(path, "disk or diskGuid missing");
  }
  if (typeof r.updatedAt !== "number" || !Array.isArray(r.partitions)) {
    throw new RecordFileError(path, "updatedAt or partitions missing");
  }
  const partitions = r.partitions.map((p: Record<string, unknown>, i: number) => {
    const ints = [p.number, p.firstLba, p.lastLba].every(Number.isSafeInteger);
    const strs = [p.uuid, p.type, p.name].every((x) => typeof x === "string");
    if (!ints || !strs || !GUID.test(p.uuid as string)) {
      throw new RecordFileError(path, `partition ${i} is malformed`);
    }
    return {
      number: p.number as number,
      uuid: p.uuid as string,
      type: p.type as string,
      name: p.name as string,
      firstLba: p.firstLba as number,
      lastLba: p.lastLba as number,
    };
  });
  return { version: 1, disk: r.disk, diskGuid: r.diskGuid, updatedAt: r.updatedAt, partitions };
}

/**
 * The record after this boot: unchanged when nothing was created; the union
 * (by partition GUID) when created on the recorded disk; only the new
 * partitions when the disk's GUID changed (it was re-provisioned). Pure.
 */
export function mergeRecord(
  existing: RecordContent | undefined,
  created: CreatedOnDisk | undefined,
  now: number,
): RecordContent | undefined {
  if (!created || created.partitions.length === 0) return existing;
  const base = existing?.diskGuid === created.diskGuid ? existing.partitions : [];
  const byUuid = new Map(base.map((p) => [p.uuid, p]));
  let changed = existing?.diskGuid !== created.diskGuid || existing?.disk !== created.disk;
  for (const p of created.partitions) {
    const old = byUuid.get(p.uuid);
    if (!old || JSON.stringify(old) !== JSON.stringify(p)) changed = true;
    byUuid.set(p.uuid, p);
  }
  if (!changed && existing) return existing;
  return {
    version: 1,
    disk: created.disk,
    diskGuid: created.diskGuid,
    updatedAt: now,
    partitions: [...byUuid.values()].sort((a, b) => a.number - b.number),
  };
}

/** Read the record; undefined when there is none. @throws RecordFileError, Deno errors */
export async function readRecordFile(path: string): Promise<RecordContent | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  return parseRecord(path, text);
}

/** Replace the record atomically and durably. */
export async function writeRecordFile(path: string, record: RecordContent): Promise<void> {
  const tmp = `${path}.tmp`;
  const data = new TextEncoder().encode(JSON.stringify(record, null, 2) + "\n");
  {
    using f = await Deno.open(tmp, { write: true, create: true, truncate: true, mode: 0o600 });
    for (let off = 0; off < data.length;) off += await f.write(data.subarray(off));
    await f.sync();
  }
  await Deno.rename(tmp, path);
  const dir = path.slice(0, path.lastIndexOf("/")) || "/";
  using d = await Deno.open(dir, { read: true });
  await d.sync();
}
