/**
 * FileList and FileRead: the node's files under the caller's allowed roots
 * (roots.ts), bounded (budgets.ts), with /system/state's secrets redacted
 * (state_redaction.ts). Paths are resolved under `root` (`/` on a node, a
 * directory in dev mode and tests); a symlink whose target leaves the
 * allowed root is refused, and only regular files and directories are read.
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { join } from "node:path";
import {
  type FileListResponse,
  FileListResponseSchema,
  FileReadResponseSchema,
  type MachineService,
} from "../../gen/machined/v1/machine_pb.ts";
import { callerKey, visibilityOf } from "../../auth/mod.ts";
import {
  CanceledError,
  DeadlineExceededError,
  FailedPreconditionError,
  PathNotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnimplementedError,
} from "../../errors/mod.ts";
import type { Role } from "../../../pki/mod.ts";
import { FILE_BOUNDS, type FileBounds } from "./budgets.ts";
import { checkPath, REDACTED_ROOT } from "./roots.ts";
import { redactStateFile } from "./state_redaction.ts";

/** The file access of machined: where the node's `/` is. */
export interface FileDeps {
  /** The directory that stands for the node's `/` (`/` on a node). */
  readonly root: string;
  /** Tests lower them to meet a limit. @default FILE_BOUNDS */
  readonly bounds?: FileBounds;
}

/** A request path resolved on disk. */
export interface Resolved {
  readonly path: string;
  readonly real: string;
  readonly root: string;
}

/** The FileList and FileRead handlers; Unimplemented without {@link FileDeps}. */
export function createFileHandlers(
  files: FileDeps | undefined,
): Pick<ServiceImpl<typeof MachineService>, "fileList" | "fileRead"> {
  const bounds = files?.bounds ?? FILE_BOUNDS;
  return {
    async *fileList(req, ctx) {
      const deps = need(files, "FileList");
      const signal = deadline(ctx, bounds);
      const start = await resolve(deps.root, role(ctx), req.path);
      const depth = Math.min(req.depth, bounds.listMaxDepth);
      let count = 0;
      for await (const entry of walk(deps.root, start.path, depth, signal)) {
        count++;
        const last = count >= bounds.listMaxEntries;
        yield create(FileListResponseSchema, { ...entry, truncated: last });
        if (last) return;
      }
    },

    async *fileRead(req, ctx) {
      const deps = need(files, "FileRead");
      const signal = deadline(ctx, bounds);
      const r = await resolve(deps.root, role(ctx), req.path);
      for await (const c of readChunks(r, role(ctx), bounds, signal)) {
        yield create(FileReadResponseSchema, c);
      }
    },
  };
}

/**
 * The chunks of the regular file `r` as `who` may see it: redacted under
 * /system/state (whole, then chunked), else streamed. Bounded by the read budget.
 */
export async function* readChunks(
  r: Resolved,
  who: Role | undefined,
  bounds: FileBounds,
  signal: Deadline,
): AsyncGenerator<{ data: Uint8Array; redacted: boolean }> {
  const st = await Deno.stat(r.real);
  if (!st.isFile) throw notRegular(r.path, st);
  const under = relativeTo(r.path, REDACTED_ROOT);
  if (under === undefined) {
    for await (const c of streamFile(r, bounds, signal)) yield { data: c.data, redacted: false };
    return;
  }
  const bytes = await readBounded(r, bounds, signal);
  const out = redactStateFile(under, bytes, visibilityOf(who));
  let i = 0;
  do {
    yield { data: out.bytes.slice(i, i += bounds.chunkBytes), redacted: out.redacted };
  } while (i < out.bytes.length);
}

export function role(ctx: HandlerContext): Role | undefined {
  return ctx.values.get(callerKey)?.role;
}

/** The request's deadline: the budget's, or the client's cancel. */
export interface Deadline {
  /** @throws DeadlineExceededError once past it; CanceledError once the client cancels. */
  check(path: string): void;
}

export function deadline(ctx: HandlerContext, bounds: FileBounds): Deadline {
  const end = Date.now() + bounds.deadlineMs;
  return {
    check(path) {
      if (ctx.signal.aborted) throw new CanceledError(`${path}: cancelled`, { context: { path } });
      if (Date.now() < end) return;
      throw new DeadlineExceededError(
        `${path}: stopped at the deadline (${bounds.deadlineMs} ms)`,
        { context: { path, deadlineMs: bounds.deadlineMs } },
      );
    },
  };
}

/**
 * The allowed path on disk: its realpath must stay under the allowed root's
 * realpath, so a symlink cannot lead out.
 */
export async function resolve(
  root: string,
  who: Role | undefined,
  path: string,
): Promise<Resolved> {
  const allowed = checkPath(who, path);
  const onDisk = join(root, allowed.path);
  let real: string;
  let rootReal: string;
  try {
    real = await Deno.realPath(onDisk);
    rootReal = await Deno.realPath(join(root, allowed.root));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new PathNotFoundError(`${allowed.path}: no such file or directory`, {
        context: { path: allowed.path },
        cause: e,
      });
    }
    throw new PermissionDeniedError(`${allowed.path}: ${(e as Error).message}`, {
      context: { path: allowed.path },
      cause: e,
    });
  }
  if (real !== rootReal && !real.startsWith(rootReal.replace(/\/$/, "") + "/")) {
    throw new PermissionDeniedError(
      `${allowed.path}: a symlink leads outside ${allowed.root}, which is refused`,
      { context: { path: allowed.path, root: allowed.root } },
    );
  }
  return { path: allowed.path, real, root: allowed.root };
}

/** `path` relative to `root` when under it ("" for the root itself), else undefined. */
export function relativeTo(path: string, root: string): string | undefined {
  if (path === root) return "";
  return path.startsWith(root + "/") ? path.slice(root.length + 1) : undefined;
}

function notRegular(path: string, st: Deno.FileInfo): FailedPreconditionError {
  const kind = st.isDirectory
    ? "a directory (use FileList)"
    : "not a regular file (devices, FIFOs and sockets are never read)";
  return new FailedPreconditionError(`${path} is ${kind}`, { context: { path } });
}

async function open(r: Resolved): Promise<Deno.FsFile> {
  const file = await Deno.open(r.real, { read: true });
  const st = await file.stat();
  if (st.isFile) return file;
  file.close();
  throw notRegular(r.path, st);
}

async function* streamFile(r: Resolved, bounds: FileBounds, signal: Deadline) {
  const file = await open(r);
  try {
    let sent = 0;
    const buf = new Uint8Array(bounds.chunkBytes);
    for (;;) {
      signal.check(r.path);
      const n = await file.read(
        buf.subarray(0, Math.min(buf.length, bounds.readMaxBytes - sent + 1)),
      );
      if (n === null) return;
      if (sent + n > bounds.readMaxBytes) {
        const data = buf.slice(0, bounds.readMaxBytes - sent);
        if (data.length > 0) yield create(FileReadResponseSchema, { data });
        throw tooLarge(r.path, bounds);
      }
      sent += n;
      yield create(FileReadResponseSchema, { data: buf.slice(0, n) });
    }
  } finally {
    file.close();
  }
}

async function readBounded(r: Resolved, bounds: FileBounds, signal: Deadline) {
  const chunks: Uint8Array[] = [];
  for await (const c of streamFile(r, bounds, signal)) chunks.push(c.data);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.length) - c.length);
  return out;
}

function tooLarge(path: string, bounds: FileBounds): ResourceExhaustedError {
  return new ResourceExhaustedError(
    `${path} is larger than the read budget (${bounds.readMaxBytes} bytes); the first ` +
      `${bounds.readMaxBytes} bytes were sent`,
    { context: { path, readMaxBytes: bounds.readMaxBytes } },
  );
}

export type Entry = Omit<FileListResponse, "$typeName" | "truncated">;

/** FileList's walk: `path`, then its entries depth-first, symlinks not followed. */
export async function* walk(
  root: string,
  path: string,
  depth: number,
  signal: Deadline,
): AsyncGenerator<Entry> {
  signal.check(path);
  const st = await Deno.lstat(join(root, path));
  yield await entryOf(root, path, st);
  if (!st.isDirectory) return;
  yield* children(root, path, depth, signal);
}

async function* children(
  root: string,
  dir: string,
  depth: number,
  signal: Deadline,
): AsyncGenerator<Entry> {
  let names: string[];
  try {
    names = await sortedNames(root, dir);
  } catch (e) {
    yield { ...blank(dir), kind: "dir", error: (e as Error).message };
    return;
  }
  for (const name of names) {
    signal.check(dir);
    const path = childPath(dir, name);
    let st: Deno.FileInfo;
    try {
      st = await Deno.lstat(join(root, path));
    } catch (e) {
      yield { ...blank(path), error: (e as Error).message };
      continue;
    }
    yield await entryOf(root, path, st);
    if (st.isDirectory && depth > 0) yield* children(root, path, depth - 1, signal);
  }
}

/** The names in `dir` (a node path under `root`), sorted: both walks list in this order. */
export async function sortedNames(root: string, dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(join(root, dir))) names.push(e.name);
  return names.sort();
}

/** The node path of `name` inside `dir`. */
export function childPath(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

function blank(path: string): Entry {
  return { path, kind: "other", size: 0n, mode: 0, mtimeMs: 0n, link: "", error: "" };
}

async function entryOf(root: string, path: string, st: Deno.FileInfo): Promise<Entry> {
  const kind = st.isSymlink ? "symlink" : st.isDirectory ? "dir" : st.isFile ? "file" : "other";
  const link = st.isSymlink ? await Deno.readLink(join(root, path)).catch(() => "") : "";
  return {
    path,
    kind,
    size: BigInt(st.size),
    mode: (st.mode ?? 0) & 0o7777,
    mtimeMs: BigInt(st.mtime?.getTime() ?? 0),
    link,
    error: "",
  };
}

export function need(files: FileDeps | undefined, rpc: string): FileDeps {
  if (files) return files;
  throw new UnimplementedError(
    `${rpc} is not available: this machined runs without file access`,
    { context: { rpc } },
  );
}
