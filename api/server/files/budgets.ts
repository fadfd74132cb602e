/**
 * The bounds of FileList and FileRead, enforced by machined (the edge only
 * forwards frames). One place, so the handlers, their tests at the limit and
 * docs/api.md's budget table (`deno task docs:budgets`) share the numbers.
 */

/** Bytes one FileRead may return (a larger file is cut here and ends ResourceExhausted). */
export const FILE_READ_MAX_BYTES = 16 * 1024 * 1024;
/** Bytes per FileRead message (well under the 4 MiB message budget). */
export const FILE_READ_CHUNK_BYTES = 64 * 1024;
/** Entries one FileList may return (the last says `truncated`). */
export const FILE_LIST_MAX_ENTRIES = 10_000;
/** Levels FileList descends below the requested path, whatever the request asks. */
export const FILE_LIST_MAX_DEPTH = 16;
/** Bytes one FileCopy may return, all files together (then it ends `truncated`). */
export const FILE_COPY_MAX_BYTES = 64 * 1024 * 1024;
/** Wall-clock time one FileList or FileRead may take. */
export const FILE_DEADLINE_MS = 30_000;

/** The bounds, overridable by tests (to meet a limit without 16 MiB of data). */
export interface FileBounds {
  readonly readMaxBytes: number;
  readonly chunkBytes: number;
  readonly listMaxEntries: number;
  readonly listMaxDepth: number;
  readonly deadlineMs: number;
  readonly copyMaxBytes: number;
}

/** The production bounds. */
export const FILE_BOUNDS: FileBounds = {
  readMaxBytes: FILE_READ_MAX_BYTES,
  chunkBytes: FILE_READ_CHUNK_BYTES,
  listMaxEntries: FILE_LIST_MAX_ENTRIES,
  listMaxDepth: FILE_LIST_MAX_DEPTH,
  deadlineMs: FILE_DEADLINE_MS,
  copyMaxBytes: FILE_COPY_MAX_BYTES,
};
