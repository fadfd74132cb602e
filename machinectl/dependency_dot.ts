/**
 * The controller graph as Graphviz DOT: controllers are boxes grouped by
 * domain (the part of the name before the dot), resource types are ellipses,
 * an arrow runs from each type a controller reads to it (dashed for a weak
 * input) and from it to each type it writes (bold when it owns the type
 * exclusively). Pure and deterministic, so the rendered picture in docs/ can be
 * regenerated and diffed.
 */

/** One controller and what it declares, as the ControllerGraph RPC returns it. */
export interface GraphController {
  readonly name: string;
  readonly inputs: readonly { readonly type: string; readonly kind: string }[];
  readonly outputs: readonly { readonly type: string; readonly kind: string }[];
}

/** DOT for `controllers`. */
export function dependencyDot(controllers: readonly GraphController[]): string {
  const sorted = [...controllers].sort((a, b) => cmp(a.name, b.name));
  const types = [
    ...new Set(sorted.flatMap((c) => [...c.inputs, ...c.outputs].map((io) => io.type))),
  ].sort(cmp);
  const domains = new Map<string, GraphController[]>();
  for (const c of sorted) {
    const d = c.name.includes(".") ? c.name.slice(0, c.name.indexOf(".")) : "";
    domains.set(d, [...(domains.get(d) ?? []), c]);
  }
  const lines = [
    "digraph controllers {",
    "  rankdir=LR;",
    '  graph [fontname="Helvetica", fontsize=11, nodesep=0.25, ranksep=0.9];',
    '  node [fontname="Helvetica", fontsize=10];',
    '  edge [color="#555555", arrowsize=0.6];',
  ];
  for (const [domain, list] of domains) {
    const indent = domain ? "    " : "  ";
    if (domain) {
      lines.push(`  subgraph ${q(`cluster_${domain}`)} {`);
      lines.push(`    label=${q(domain)}; style="rounded"; color="#999999";`);
    }
    for (const c of list) {
      lines.push(
        `${indent}${q(c.name)} [shape=box, style="rounded,filled", fillcolor="#dbe9f6", label=${
          q(c.name.slice(domain ? domain.length + 1 : 0))
        }];`,
      );
    }
    if (domain) lines.push("  }");
  }
  for (const t of types) {
    lines.push(`  ${q(t)} [shape=ellipse, style=filled, fillcolor="#f3f3e0"];`);
  }
  for (const c of sorted) {
    for (const i of c.inputs) {
      lines.push(`  ${q(i.type)} -> ${q(c.name)}${i.kind === "weak" ? " [style=dashed]" : ""};`);
    }
    for (const o of c.outputs) {
      lines.push(`  ${q(c.name)} -> ${q(o.type)}${o.kind === "exclusive" ? " [penwidth=2]" : ""};`);
    }
  }
  lines.push("}");
  return lines.join("\n") + "\n";
}

/** Formats `dot` can render to. */
export type RenderFormat = "svg" | "png";

/** A `dot` that failed or is missing, with what it said. */
export class GraphvizError extends Error {
  override name = "GraphvizError";
}

/**
 * Renders DOT with Graphviz's `dot` (Debian's `graphviz`).
 * @throws GraphvizError when `dot` is not installed or fails
 */
export async function renderDot(
  dot: string,
  format: RenderFormat,
  bin = "dot",
): Promise<Uint8Array> {
  let child;
  try {
    child = new Deno.Command(bin, {
      args: [`-T${format}`],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new GraphvizError(
        `Cannot render ${format}: "${bin}" is not installed (Debian: graphviz)`,
      );
    }
    throw e;
  }
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(dot));
  await writer.close();
  const out = await child.output();
  if (!out.success) {
    const why = new TextDecoder().decode(out.stderr).trim();
    throw new GraphvizError(`"${bin} -T${format}" failed (exit ${out.code}): ${why}`);
  }
  return out.stdout;
}

function q(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
