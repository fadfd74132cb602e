/**
 * Typed store errors. Callers test them with the predicates (`isNotFound(e)`, ...)
 * rather than by message; the API maps them to gRPC codes in one place.
 */
import { type Pointer, pointerKey } from "./resource.ts";

/** Base of every error the store raises; carries the resource it concerns. */
export class StoreError extends Error {
  override name = "StoreError";
  constructor(readonly pointer: Pointer, message: string) {
    super(message);
  }
}

/** The resource does not exist. */
export class NotFoundError extends StoreError {
  override name = "NotFoundError";
  constructor(pointer: Pointer) {
    super(pointer, `Resource ${pointerKey(pointer)} does not exist`);
  }
}

/** Create of a resource that already exists. */
export class AlreadyExistsError extends StoreError {
  override name = "AlreadyExistsError";
  constructor(pointer: Pointer) {
    super(pointer, `Resource ${pointerKey(pointer)} already exists`);
  }
}

/** Compare-and-swap failed: the caller's version is stale. Nothing was written. */
export class ConflictError extends StoreError {
  override name = "ConflictError";
  constructor(pointer: Pointer, readonly expected: number, readonly actual: number) {
    super(
      pointer,
      `Cannot update ${pointerKey(pointer)}: expected version ${expected}, store has ${actual}`,
    );
  }
}

/** A writer tried to change a resource another owner wrote. */
export class OwnerConflictError extends StoreError {
  override name = "OwnerConflictError";
  constructor(pointer: Pointer, readonly owner: string, readonly writer: string) {
    super(
      pointer,
      `Cannot modify ${pointerKey(pointer)}: owned by "${owner}", not "${writer}"`,
    );
  }
}

/** An update to a resource that is tearing down, or destroy of one that is not. */
export class PhaseConflictError extends StoreError {
  override name = "PhaseConflictError";
  constructor(pointer: Pointer, message: string) {
    super(pointer, `Cannot change ${pointerKey(pointer)}: ${message}`);
  }
}

/** Destroy while finalizers remain. */
export class FinalizersPendingError extends StoreError {
  override name = "FinalizersPendingError";
  constructor(pointer: Pointer, readonly finalizers: readonly string[]) {
    super(
      pointer,
      `Cannot destroy ${pointerKey(pointer)}: finalizers remain (${finalizers.join(", ")})`,
    );
  }
}

/** True for {@link NotFoundError}. */
export const isNotFound = (e: unknown): e is NotFoundError => e instanceof NotFoundError;
/** True for {@link AlreadyExistsError}. */
export const isAlreadyExists = (e: unknown): e is AlreadyExistsError =>
  e instanceof AlreadyExistsError;
/** True for {@link ConflictError} (a stale version). */
export const isConflict = (e: unknown): e is ConflictError => e instanceof ConflictError;
/** True for {@link OwnerConflictError}. */
export const isOwnerConflict = (e: unknown): e is OwnerConflictError =>
  e instanceof OwnerConflictError;
/** True for {@link PhaseConflictError}. */
export const isPhaseConflict = (e: unknown): e is PhaseConflictError =>
  e instanceof PhaseConflictError;
/** True for {@link FinalizersPendingError}. */
export const isFinalizersPending = (e: unknown): e is FinalizersPendingError =>
  e instanceof FinalizersPendingError;
