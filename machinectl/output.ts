/**
 * Renders resources for people (aligned tables from each type's descriptor
 * columns) and for scripts (JSON and YAML with a stable shape: metadata then
 * spec). Every cell and value is node data: tables escape each cell
 * (escapeText), JSON and YAML escape in their own syntax (document_text.ts).
 */
import { toJson, toYaml } from "./document_text.ts";
import { escapeText } from "./terminal_text.ts";
import {
  cell,
  type MachineResource,
  RESOURCE_DESCRIPTORS,
  type ResourceType,
} from "../resources/mod.ts";

/** Output formats of `get`. */
export type OutputFormat = "table" | "json" | "yaml";

/**
 * Lays out rows as columns separated by three spaces, the first row a header.
 * Every cell is escaped (escapeText): a cell is one field on one line.
 */
export function alignTable(cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(escapeText));
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((c, i) => widths[i] = Math.max(widths[i] ?? 0, c.length));
  }
  return rows.map((row) =>
    row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]))).join("   ").trimEnd()
  ).join("\n");
}

/** The header of a type's table. */
export function tableHeader(type: ResourceType): string[] {
  return ["NAMESPACE", "TYPE", "ID", "VERSION", ...columnsOf(type).map((c) => c.header)];
}

/** One table row for a resource. */
export function tableRow(r: MachineResource): string[] {
  const columns = columnsOf(r.metadata.type);
  return [
    r.metadata.namespace,
    r.metadata.type,
    r.metadata.id,
    String(r.metadata.version),
    ...columns.map((c) => oneLine(c.value(r.spec))),
  ];
}

/** Renders resources of one type in a format. */
export function formatResources(
  type: ResourceType,
  resources: readonly MachineResource[],
  format: OutputFormat,
): string {
  switch (format) {
    case "table":
      return alignTable([tableHeader(type), ...resources.map(tableRow)]);
    case "json":
      return resources.map((r) => toJson(plain(r), 2)).join("\n");
    case "yaml":
      return resources.map((r) => toYaml(plain(r))).join("\n---\n");
  }
}

/** The stable document shape for json/yaml output. */
export function plain(r: MachineResource): Record<string, unknown> {
  const md = r.metadata;
  return {
    metadata: {
      namespace: md.namespace,
      type: md.type,
      id: md.id,
      version: md.version,
      owner: md.owner,
      phase: md.phase,
      finalizers: [...md.finalizers],
      labels: { ...md.labels },
      created: md.created.toISOString(),
      updated: md.updated.toISOString(),
    },
    spec: JSON.parse(JSON.stringify(r.spec)),
  };
}

function columnsOf(type: ResourceType) {
  // The descriptor table is typed over every ResourceType, so a new type without
  // columns fails type-checking in resources/registry.ts.
  return RESOURCE_DESCRIPTORS[type].columns as ReadonlyArray<
    { header: string; value: (spec: unknown) => string }
  >;
}

/** A value as one cell: escaped first, so a line break shows as `\n`, then spaces squeezed. */
function oneLine(s: string): string {
  const flat = escapeText(cell(s)).replace(/ +/g, " ");
  return flat.length > 80 ? flat.slice(0, 77) + "..." : flat;
}
