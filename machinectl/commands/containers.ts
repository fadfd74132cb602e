/**
 * `machinectl containers` and `machinectl images`: what containerd's CRI
 * holds (pod sandboxes and containers; images), through the Containers and
 * Images RPCs, as a table, JSON or YAML like `get`.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { ContainersResponse, ImagesResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { defineCommand } from "../command.ts";
import { OUTPUT_FLAG } from "./observe_format.ts";
import { connectToNode } from "../connection.ts";
import { CliError, type Io } from "../io.ts";
import { alignTable } from "../output.ts";
import { toJson, toYaml } from "../document_text.ts";
import { esc } from "../terminal_text.ts";
import { PULL_TIMEOUT_MS } from "../../api/server/mod.ts";

/** The containers (and their pods) as plain data, for json/yaml and the table. */
export function containersDocument(r: ContainersResponse) {
  const at = (t?: Timestamp) => (t ? timestampDate(t).toISOString() : "");
  return {
    pods: r.pods.map((p) => ({
      id: p.id,
      name: p.name,
      namespace: p.namespace,
      uid: p.uid,
      state: p.state,
      created: at(p.created),
      labels: { ...p.labels },
      runtimeHandler: p.runtimeHandler,
    })),
    containers: r.containers.map((c) => ({
      id: c.id,
      podId: c.podId,
      name: c.name,
      image: c.image,
      imageRef: c.imageRef,
      state: c.state,
      attempt: c.attempt,
      created: at(c.created),
      labels: { ...c.labels },
    })),
  };
}

/** The images as plain data. */
export function imagesDocument(r: ImagesResponse) {
  return r.images.map((i) => ({
    id: i.id,
    tags: [...i.tags],
    digests: [...i.digests],
    sizeBytes: Number(i.sizeBytes),
    pinned: i.pinned,
  }));
}

/** The containers table: one row per container, with its pod's name; pods without any after. */
export function formatContainersTable(doc: ReturnType<typeof containersDocument>): string {
  const pods = new Map(doc.pods.map((p) => [p.id, p]));
  const used = new Set(doc.containers.map((c) => c.podId));
  const short = (id: string) => id.slice(0, 13);
  return alignTable([
    ["POD", "NAMESPACE", "CONTAINER", "ID", "IMAGE", "STATE", "CREATED"],
    ...doc.containers.map((c) => {
      const pod = pods.get(c.podId);
      return [
        pod?.name ?? short(c.podId),
        pod?.namespace ?? "",
        c.name,
        short(c.id),
        c.image,
        c.state,
        c.created,
      ];
    }),
    ...doc.pods.filter((p) => !used.has(p.id)).map((p) => [
      p.name,
      p.namespace,
      "-",
      short(p.id),
      "-",
      `pod ${p.state}`,
      p.created,
    ]),
  ]);
}

/** The images table. */
export function formatImagesTable(doc: ReturnType<typeof imagesDocument>): string {
  return alignTable([
    ["IMAGE", "ID", "SIZE"],
    ...doc.map((i) => [
      i.tags[0] ?? i.digests[0] ?? "<none>",
      i.id.replace(/^sha256:/, "").slice(0, 12),
      formatBytes(i.sizeBytes),
    ]),
  ]);
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) (v /= 1024), u++;
  return `${v.toFixed(1)} ${units[u]}`;
}

function print(io: Io, format: string, doc: unknown, table: () => string, empty: boolean) {
  if (format === "json") io.out(toJson(doc, 2));
  else if (format === "yaml") io.out(toYaml(doc));
  else if (empty) io.err("none");
  else io.out(table());
}

export const containersCommand = defineCommand({
  name: "containers",
  summary: "List containerd's pod sandboxes and containers (CRI)",
  connects: true,
  flags: OUTPUT_FLAG,
  async run({ flags, args, io }) {
    if (args.length > 0) throw new CliError(`containers: unexpected "${args[0]}"`, 2);
    const format = flags.output;
    using conn = await connectToNode(flags);
    const doc = containersDocument(await conn.client.containers({}, { timeoutMs: 15_000 }));
    const empty = doc.pods.length === 0 && doc.containers.length === 0;
    print(io, format, doc, () => formatContainersTable(doc), empty);
    return 0;
  },
});

export const imagesCommand = defineCommand({
  name: "images",
  args: "[pull IMAGE]",
  summary: "List the images in containerd's CRI image store, or pull one (operator)",
  connects: true,
  flags: OUTPUT_FLAG,
  async run({ flags, args, io }) {
    if (args[0] === "pull") return await pullImage(flags, args.slice(1), io);
    if (args.length > 0) throw new CliError(`images: unexpected "${args[0]}"`, 2);
    const format = flags.output;
    using conn = await connectToNode(flags);
    const doc = imagesDocument(await conn.client.images({}, { timeoutMs: 15_000 }));
    print(io, format, doc, () => formatImagesTable(doc), doc.length === 0);
    return 0;
  },
});

/**
 * `images pull IMAGE`: containerd on the node pulls it (verifying the registry against the
 * node's trust bundle); waits as long as the node's pull budget and a little more.
 */
async function pullImage(
  flags: Parameters<typeof connectToNode>[0],
  args: string[],
  io: Io,
): Promise<number> {
  if (args.length !== 1) throw new CliError("usage: machinectl images pull IMAGE", 2);
  using conn = await connectToNode(flags);
  const r = await conn.client.imagePull({ image: args[0] }, {
    timeoutMs: PULL_TIMEOUT_MS + 30_000,
  });
  io.out(esc`pulled ${args[0]}: ${r.imageId} (${conn.endpoint})`);
  return 0;
}
