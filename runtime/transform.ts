/**
 * COSI's transform controller, typed: one input type mapped to one output type
 * by a pure function, one output per input. The controller owns its outputs
 * exclusively, and an output whose input is gone (or tearing down), or whose
 * input now maps to nothing, is not kept by the cycle, so the runtime's owner
 * GC tears it down (honouring finalizers). Anything that needs more than one
 * input per output (a join) writes a reconcile of its own, and can still use
 * {@link applyWanted} for the apply-and-keep half.
 * @module
 */
import type { Controller, InputDecl, ReconcileContext } from "./controller.ts";
import type { Catalog, ResourceOf, TypeName } from "./resource.ts";

/** One output a controller wants to exist this cycle. */
export interface WantedOutput<M extends Catalog, O extends TypeName<M>> {
  readonly namespace: string;
  readonly id: string;
  readonly spec: M[O];
  readonly labels?: Record<string, string>;
}

/**
 * Applies each wanted output (marking it kept), skipping one that is still
 * being torn down with finalizers pending: it is re-created once they are gone,
 * because the runtime re-runs the owner when its outputs' finalizers change.
 */
export async function applyWanted<M extends Catalog, O extends TypeName<M>>(
  ctx: ReconcileContext<M>,
  output: O,
  wanted: Iterable<WantedOutput<M, O>>,
): Promise<void> {
  for (const w of wanted) {
    const cur = ctx.find(output, w.namespace, w.id);
    if (cur?.metadata.phase === "tearingDown" && cur.metadata.finalizers.length > 0) continue;
    const ptr = { type: output, namespace: w.namespace, id: w.id };
    await ctx.apply(ptr, w.spec, w.labels ? { labels: w.labels } : undefined);
  }
}

/** What {@link transformController} maps one input to: its output's spec and, optionally, where. */
export interface TransformResult<M extends Catalog, O extends TypeName<M>> {
  readonly spec: M[O];
  /** @default the input's namespace */
  readonly namespace?: string;
  /** @default the input's id */
  readonly id?: string;
  readonly labels?: Record<string, string>;
}

/** Definition of a transform controller. */
export interface TransformDef<M extends Catalog, I extends TypeName<M>, O extends TypeName<M>> {
  /** Qualified controller name, also the owner of the outputs. */
  readonly name: string;
  /** The input type, watched weakly (the transform never holds a finalizer on it). */
  readonly input: I;
  /** Only inputs in this namespace are mapped. */
  readonly inputNamespace?: string;
  readonly output: O;
  /** Pure: the output for one running input, or undefined for none. */
  map(input: ResourceOf<M, I>): TransformResult<M, O> | undefined;
}

/**
 * A controller keeping exactly one output per running input that `map` accepts.
 * Two inputs mapping to the same output pointer is a bug in `map`: the later
 * one wins within a cycle.
 */
export function transformController<
  M extends Catalog,
  I extends TypeName<M>,
  O extends TypeName<M>,
>(def: TransformDef<M, I, O>): Controller<M> {
  const input: InputDecl<M> = def.inputNamespace === undefined
    ? { type: def.input, kind: "weak" }
    : { type: def.input, kind: "weak", namespace: def.inputNamespace };
  return {
    name: def.name,
    inputs: [input],
    outputs: [{ type: def.output, kind: "exclusive" }],
    async reconcile(ctx) {
      const inputs = ctx.list(def.input, { namespace: def.inputNamespace });
      const wanted: WantedOutput<M, O>[] = [];
      for (const r of inputs) {
        if (r.metadata.phase !== "running") continue; // going away: its output goes too
        const out = def.map(r);
        if (!out) continue;
        wanted.push({
          namespace: out.namespace ?? r.metadata.namespace,
          id: out.id ?? r.metadata.id,
          spec: out.spec,
          labels: out.labels,
        });
      }
      await applyWanted(ctx, def.output, wanted);
    },
  };
}
