/**
 * `machinectl disks`: the block devices as the node sees them — each disk
 * (DiskStatus: size, model, serial, kind, partition table, layout) with its
 * partitions and volumes under it (DiscoveredVolume: size, labels,
 * filesystem, role). Read with List, so a reader may run it. Names, models
 * and labels come from the disk: they are escaped.
 */
import { fromProtoResource } from "../../api/mapping/mod.ts";
import type { DiscoveredVolumeSpec, DiskStatusSpec } from "../../resources/mod.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { alignTable } from "../output.ts";
import { escapeText } from "../terminal_text.ts";
import { toJson } from "../document_text.ts";
import { formatBytes, TABLE_OR_JSON_FLAG } from "./observe_format.ts";

/** A disk and its volumes, by kernel name. */
export interface DiskRow {
  readonly id: string;
  readonly spec: DiskStatusSpec;
  readonly volumes: readonly { id: string; spec: DiscoveredVolumeSpec }[];
}

export const disksCommand = defineCommand({
  name: "disks",
  summary: "List the node's disks with their partitions and volumes",
  connects: true,
  flags: {
    ...TABLE_OR_JSON_FLAG,
  },
  async run({ flags, args, io }) {
    if (args.length > 0) throw new CliError(`disks: unexpected "${escapeText(args[0])}"`, 2);
    const format = flags.output;
    using conn = await connectToNode(flags);
    const opts = { timeoutMs: 10_000 };
    const disks = (await conn.client.list({ type: "DiskStatus", namespace: "*" }, opts)).resources
      .map((p) => fromProtoResource(p));
    const vols = (await conn.client.list({ type: "DiscoveredVolume", namespace: "*" }, opts))
      .resources.map((p) => fromProtoResource(p));
    const rows = joinDisks(
      disks.map((d) => ({ id: d.metadata.id, spec: d.spec as DiskStatusSpec })),
      vols.map((v) => ({ id: v.metadata.id, spec: v.spec as DiscoveredVolumeSpec })),
    );
    io.out(format === "json" ? toJson(rows, 2) : formatDisks(rows));
    return 0;
  },
});

/** Each disk with its volumes (by partition number), disks by name. Pure. */
export function joinDisks(
  disks: readonly { id: string; spec: DiskStatusSpec }[],
  volumes: readonly { id: string; spec: DiscoveredVolumeSpec }[],
): DiskRow[] {
  return [...disks].sort((a, b) => a.id < b.id ? -1 : 1).map((d) => ({
    ...d,
    volumes: volumes.filter((v) => v.spec.disk === d.id)
      .sort((a, b) => a.spec.partitionNumber - b.spec.partitionNumber),
  }));
}

/** The disks table: a disk line, then its volumes indented. Pure; node data escaped. */
export function formatDisks(rows: readonly DiskRow[]): string {
  const e = escapeText;
  return alignTable([
    ["NAME", "SIZE", "KIND", "MODEL", "SERIAL", "TABLE/FS", "LABEL", "ROLE"],
    ...rows.flatMap((d) => [
      [
        e(d.id),
        formatBytes(d.spec.size),
        d.spec.kind,
        e(d.spec.model) || "-",
        e(d.spec.serial) || "-",
        `${d.spec.partitionTable} (${d.spec.layout})`,
        "-",
        d.spec.error ? `error: ${e(d.spec.error)}` : "-",
      ],
      ...d.volumes.map((v) => [
        `  ${e(v.id)}`,
        formatBytes(v.spec.size),
        v.spec.partitionNumber === 0 ? "whole" : "part",
        "",
        "",
        e(v.spec.filesystem) || "-",
        e(v.spec.partitionLabel || v.spec.filesystemLabel) || "-",
        e(v.spec.role) || "-",
      ]),
    ]),
  ]);
}
