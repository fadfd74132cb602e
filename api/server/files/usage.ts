/**
 * DiskUsage: `du` over the API. Every entry under the path is counted (its
 * st_blocks × 512, symlinks not followed, other mounts not skipped), and a
 * total is reported for each directory down to the requested depth, deepest
 * first, the path itself last. Bounded like FileList: the entry budget stops
 * the count (the last total says `truncated`), depth of the report is capped,
 * and the deadline holds.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { join } from "node:path";
import {
  type DiskUsageResponse,
  DiskUsageResponseSchema,
  type MachineService,
} from "../../gen/machined/v1/machine_pb.ts";
import { FILE_BOUNDS, type FileBounds } from "./budgets.ts";
import {
  childPath,
  type Deadline,
  deadline,
  type FileDeps,
  need,
  resolve,
  role,
  sortedNames,
} from "./handlers.ts";

type Row = Omit<DiskUsageResponse, "$typeName">;

/** The DiskUsage handler; Unimplemented without {@link FileDeps}. */
export function createUsageHandler(
  files: FileDeps | undefined,
): Pick<ServiceImpl<typeof MachineService>, "diskUsage"> {
  const bounds = files?.bounds ?? FILE_BOUNDS;
  return {
    async *diskUsage(req, ctx) {
      const deps = need(files, "DiskUsage");
      const dl = deadline(ctx, bounds);
      const start = await resolve(deps.root, role(ctx), req.path);
      const walk = new UsageWalk(deps.root, Math.min(req.depth, bounds.listMaxDepth), bounds, dl);
      const { row: top } = await walk.total(start.path, 0);
      walk.rows.push({ ...top, truncated: walk.truncated });
      for (const r of walk.rows) yield create(DiskUsageResponseSchema, r);
    },
  };
}

/** One count: the rows to report and how many entries were seen. */
class UsageWalk {
  readonly rows: Row[] = [];
  seen = 0;
  truncated = false;

  constructor(
    readonly root: string,
    readonly depth: number,
    readonly bounds: FileBounds,
    readonly dl: Deadline,
  ) {}

  /**
   * The total of `path` (a directory or not), and whether it is a directory; reports
   * subdirectories within the depth.
   */
  async total(path: string, level: number): Promise<{ row: Row; dir: boolean }> {
    this.dl.check(path);
    const row: Row = { path, size: 0n, entries: 0n, error: "", truncated: false };
    let st: Deno.FileInfo;
    try {
      st = await Deno.lstat(join(this.root, path));
    } catch (e) {
      return { row: { ...row, error: (e as Error).message }, dir: false };
    }
    this.seen++;
    row.size = BigInt((st.blocks ?? 0) * 512);
    row.entries = 1n;
    if (!st.isDirectory) return { row, dir: false };
    let names: string[] = [];
    try {
      names = await sortedNames(this.root, path);
    } catch (e) {
      row.error = (e as Error).message;
    }
    for (const name of names) {
      if (this.seen >= this.bounds.listMaxEntries) {
        this.truncated = true;
        break;
      }
      const child = await this.total(childPath(path, name), level + 1);
      row.size += child.row.size;
      row.entries += child.row.entries;
      if (child.row.error && !row.error) row.error = `${child.row.path}: ${child.row.error}`;
      if (level + 1 <= this.depth && child.row.entries > 0n && child.dir) {
        this.rows.push(child.row);
      }
    }
    return { row, dir: true };
  }
}
