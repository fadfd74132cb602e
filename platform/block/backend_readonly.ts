/**
 * Dev mode's block backend: reads the host's disks through another backend and
 * refuses every write with EROFS, so machined can show the host's disks without
 * ever changing one.
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import type { BlockBackend } from "./backend.ts";

/** Wraps `inner`: reads pass through, writes fail with `EROFS`. */
export class ReadOnlyBlockBackend implements BlockBackend {
  constructor(readonly inner: BlockBackend) {}

  geometry(path: string) {
    return this.inner.geometry(path);
  }
  read(path: string, offset: number, length: number) {
    return this.inner.read(path, offset, length);
  }
  readGpt(path: string) {
    return this.inner.readGpt(path);
  }
  kernelPartitions(path: string) {
    return this.inner.kernelPartitions(path);
  }
  probe(path: string, offset?: number) {
    return this.inner.probe(path, offset);
  }
  write(path: string): Promise<void> {
    return refuse("write", path);
  }
  writeGpt(path: string): Promise<void> {
    return refuse("writeGpt", path);
  }
  rereadPartitions(path: string): Promise<never> {
    return refuse("rereadPartitions", path);
  }
  discard(path: string): Promise<void> {
    return refuse("discard", path);
  }
}

function refuse(op: string, path: string): Promise<never> {
  return Promise.reject(new SysError(op, errnoValue("EROFS"), `${path} (read-only in dev mode)`));
}
