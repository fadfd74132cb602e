/**
 * FileCopy: the directories and regular files under a path, each file in
 * chunks, in FileList's order, as FileRead would give them one by one (the
 * same roots, realpath check and /system/state redaction), each with its mode
 * and mtime so the copy can keep them. A symlink, a device, or a file the
 * caller may not read is sent as `skipped` with the reason, so a copy of
 * /system/state by a reader still carries what it may see. Bounded: the
 * entries and depth of FileList, the read budget per file, the copy budget
 * over all files, the deadline.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ApiError } from "../../errors/mod.ts";
import { FileCopyResponseSchema, type MachineService } from "../../gen/machined/v1/machine_pb.ts";
import { FILE_BOUNDS } from "./budgets.ts";
import { deadline, type FileDeps, need, readChunks, resolve, role, walk } from "./handlers.ts";

/** The FileCopy handler; Unimplemented without {@link FileDeps}. */
export function createCopyHandler(
  files: FileDeps | undefined,
): Pick<ServiceImpl<typeof MachineService>, "fileCopy"> {
  const bounds = files?.bounds ?? FILE_BOUNDS;
  return {
    async *fileCopy(req, ctx) {
      const deps = need(files, "FileCopy");
      const dl = deadline(ctx, bounds);
      const who = role(ctx);
      const start = await resolve(deps.root, who, req.path);
      const base = start.path.slice(0, start.path.lastIndexOf("/"));
      const name = (path: string) => path.slice(base.length + 1);
      let sent = 0;
      let seen = 0;
      for await (const e of walk(deps.root, start.path, bounds.listMaxDepth, dl)) {
        if (++seen > bounds.listMaxEntries) {
          yield create(FileCopyResponseSchema, { name: name(e.path), truncated: true });
          return;
        }
        if (e.kind === "dir") {
          // A directory that could not be read is listed again with its error: its content is left out.
          yield create(
            FileCopyResponseSchema,
            e.error
              ? { name: name(e.path), skipped: e.error }
              : { name: name(e.path), mode: e.mode, mtimeMs: e.mtimeMs, directory: true },
          );
          continue;
        }
        if (e.kind !== "file") {
          yield create(FileCopyResponseSchema, { name: name(e.path), skipped: `a ${e.kind}` });
          continue;
        }
        const head = { name: name(e.path), mode: e.mode, mtimeMs: e.mtimeMs };
        const chunks: { data: Uint8Array; redacted: boolean }[] = [];
        try {
          const r = await resolve(deps.root, who, e.path);
          for await (const c of readChunks(r, who, bounds, dl)) chunks.push(c);
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          yield create(FileCopyResponseSchema, { ...head, skipped: err.message });
          continue;
        }
        const size = chunks.reduce((n, c) => n + c.data.length, 0);
        if (sent + size > bounds.copyMaxBytes) {
          yield create(FileCopyResponseSchema, { ...head, truncated: true });
          return;
        }
        sent += size;
        // An empty file is one message without data, so the copy still holds it.
        if (chunks.length === 0) chunks.push({ data: new Uint8Array(0), redacted: false });
        let offset = 0;
        for (const c of chunks) {
          yield create(FileCopyResponseSchema, { ...head, ...c, offset: BigInt(offset) });
          offset += c.data.length;
        }
      }
    },
  };
}
