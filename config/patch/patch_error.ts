/**
 * Why a config patch was refused, with where: which patch of the request,
 * which operation of it and which JSON Pointer. A message names the operation
 * and the pointer but never quotes a value of the document or of the patch:
 * the document holds secrets (a CA key) that the caller may never have seen,
 * and a `test` that echoed what it found would read them out.
 *
 * @module
 */

/** What kind of refusal a {@link PatchError} is. */
export type PatchErrorKind =
  /** The text is not JSON or YAML. */
  | "syntax"
  /** The text parsed but is not a patch (an operation without `path`, an unknown `op`). */
  | "shape"
  /** A JSON Pointer that is malformed, or names a list index that cannot be. */
  | "pointer"
  /** The pointer's target (or its parent) does not exist. */
  | "missing"
  /** A `test` operation found another value. */
  | "test"
  /** A bound of limits.ts. */
  | "limit"
  /** The operation would expose or overwrite a secret (see secret_guard.ts). */
  | "secret";

/** Where in a request an error is: indexes count from 0. */
export interface PatchErrorAt {
  /** Which patch of the request. */
  readonly patch?: number;
  /** Which operation of a JSON Patch. */
  readonly op?: number;
  /** The operation's name (`add`, `replace`, ...). */
  readonly opName?: string;
  /** The pointer the error is about (`path`, or `from`). */
  readonly pointer?: string;
  /** Line of a syntax error in the patch text, from 1. */
  readonly line?: number;
}

/** The longest pointer quoted in a message; a longer one is cut with `…`. */
const MAX_QUOTED_POINTER = 200;

/** A refused patch; `message` says where first, then why. */
export class PatchError extends Error {
  override readonly name = "PatchError";
  readonly kind: PatchErrorKind;
  readonly at: PatchErrorAt;
  /** The reason alone, without the location. */
  readonly reason: string;

  constructor(kind: PatchErrorKind, reason: string, at: PatchErrorAt = {}) {
    super(`${where(at)}: ${reason}`);
    this.kind = kind;
    this.at = at;
    this.reason = reason;
  }

  /** This error placed in patch `patch` of a request. */
  inPatch(patch: number): PatchError {
    return new PatchError(this.kind, this.reason, { ...this.at, patch });
  }
}

/** Whether `e` is a {@link PatchError}. */
export function isPatchError(e: unknown): e is PatchError {
  return e instanceof PatchError;
}

function where(at: PatchErrorAt): string {
  const parts: string[] = [];
  if (at.patch !== undefined) parts.push(`patch ${at.patch}`);
  if (at.op !== undefined) parts.push(`operation ${at.op}${at.opName ? ` (${at.opName})` : ""}`);
  if (at.line !== undefined) parts.push(`line ${at.line}`);
  if (at.pointer !== undefined) parts.push(`at ${JSON.stringify(cut(at.pointer))}`);
  return parts.length ? parts.join(", ") : "patch";
}

function cut(p: string): string {
  return p.length > MAX_QUOTED_POINTER ? `${p.slice(0, MAX_QUOTED_POINTER)}…` : p;
}
