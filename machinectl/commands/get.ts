/**
 * `machinectl get TYPE [ID]`: one resource or a list, as a table, JSON or YAML;
 * with `-w`, the current contents then every change as it happens.
 */
import { fromProtoResource } from "../../api/mapping/mod.ts";
import type { Resource as ProtoResource } from "../../api/gen/machined/v1/resources_pb.ts";
import { LabelOp } from "../../api/gen/machined/v1/machine_pb.ts";
import {
  type MachineResource,
  resolveResourceType,
  RESOURCE_DESCRIPTORS,
  RESOURCE_TYPES,
  type ResourceType,
} from "../../resources/mod.ts";
import { parseLabelSelector } from "../../runtime/mod.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError, type Io } from "../io.ts";
import {
  alignTable,
  formatResources,
  type OutputFormat,
  plain,
  tableHeader,
  tableRow,
} from "../output.ts";
import { toJson, toYaml } from "../document_text.ts";
import { OUTPUT_FLAG } from "./observe_format.ts";

export const getCommand = defineCommand({
  name: "get",
  args: "TYPE [ID]",
  summary: "Show resources (types accept aliases: ms, svc, controllers ...)",
  connects: true,
  flags: {
    // No short form: -n is the global --nodes (talosctl spells it --namespace too).
    namespace: { kind: "string", help: "namespace (default: the type's)" },
    ...OUTPUT_FLAG,
    selector: { kind: "string", short: "l", help: "label selector, e.g. a=b,!c" },
    watch: { kind: "boolean", short: "w", help: "keep printing changes" },
  },
  async run({ flags, args, io }) {
    const [typeName, id] = args;
    if (!typeName) throw new CliError(`get: which type? known types: ${knownTypes()}`);
    const type = resolveResourceType(typeName);
    if (!type) {
      throw new CliError(`unknown resource type "${typeName}"; known types: ${knownTypes()}`);
    }
    const format = flags.output;
    using conn = await connectToNode(flags);
    const namespace = flags.namespace ?? "";
    if (flags.watch) {
      await watchResources(conn.client, type, namespace, id ?? "", format, io);
      return 0;
    }
    let resources: MachineResource[];
    if (id) {
      const r = await conn.client.get({ type, namespace, id }, { timeoutMs: 15_000 });
      resources = r.resource ? [fromProtoResource(r.resource)] : [];
    } else {
      const selector = flags.selector ? toProtoSelector(flags.selector) : [];
      const r = await conn.client.list({ type, namespace, selector }, { timeoutMs: 15_000 });
      resources = r.resources.map(fromProtoResource);
    }
    if (resources.length === 0 && format === "table") {
      io.err(
        `no ${type} resources in namespace "${namespace || RESOURCE_DESCRIPTORS[type].namespace}"`,
      );
      return 0;
    }
    io.out(formatResources(type, resources, format));
    return 0;
  },
});

async function watchResources(
  client: Awaited<ReturnType<typeof connectToNode>>["client"],
  type: ResourceType,
  namespace: string,
  id: string,
  format: OutputFormat,
  io: Io,
): Promise<void> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  Deno.addSignalListener("SIGINT", stop);
  try {
    if (format === "table") io.out(alignTable([["EVENT", ...tableHeader(type)]]));
    for await (const ev of client.watch({ type, namespace, id }, { signal: abort.signal })) {
      const e = ev.event;
      const print = (kind: string, r: ProtoResource | undefined) => {
        if (!r) return;
        const res = fromProtoResource(r);
        if (format === "table") io.out(alignTable([[kind, ...tableRow(res)]]));
        else if (format === "json") io.out(toJson({ event: kind, ...plain(res) }));
        else io.out(toYaml({ event: kind, ...plain(res) }) + "\n---");
      };
      switch (e.case) {
        case "created":
          print("created", e.value);
          break;
        case "updated":
          print("updated", e.value.resource);
          break;
        case "destroyed":
          print("destroyed", e.value);
          break;
        case "bootstrapped":
          if (format !== "table") io.out(toJson({ event: "bootstrapped" }));
          break;
        case "overflow":
          io.err(`watch fell behind: ${e.value.dropped} events dropped; re-listing`);
          break;
      }
    }
  } catch (e) {
    if (!abort.signal.aborted) throw e;
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
  }
}

function knownTypes(): string {
  return RESOURCE_TYPES.join(", ");
}

function toProtoSelector(text: string) {
  return parseLabelSelector(text).map((t) => {
    switch (t.op) {
      case "exists":
        return { key: t.key, op: LabelOp.EXISTS, values: [] };
      case "notExists":
        return { key: t.key, op: LabelOp.NOT_EXISTS, values: [] };
      case "equal":
        return { key: t.key, op: LabelOp.EQUAL, values: [t.value] };
      case "notEqual":
        return { key: t.key, op: LabelOp.NOT_EQUAL, values: [t.value] };
      case "in":
        return { key: t.key, op: LabelOp.IN, values: [...t.values] };
    }
  });
}
