/**
 * Collects a support bundle through the API, client-side: every resource of
 * every type, the services, machined's and each service's logs, the kernel
 * log, the controller graph, metrics, containers and images, memory, system
 * stats, mounts, cgroups and sockets, versions, and the machine config (not
 * the process list: a process's argv may carry what its environment hides). Secrets are redacted as the
 * API redacts them for a reader (service environment values; the CA key is
 * never served), whatever the caller's role, and every file is then scrubbed
 * of PEM private key blocks as a last line of defence. A part that cannot be
 * collected is listed in `errors.txt` and never fails the bundle.
 */
import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import { stringify } from "yaml";
import {
  CgroupsResponseSchema,
  type MachineService,
  MemoryResponseSchema,
  MountsResponseSchema,
  NetstatResponseSchema,
  StatsResponseSchema,
  VersionResponseSchema,
} from "../../api/gen/machined/v1/machine_pb.ts";
import {
  fromProtoResource,
  kernelLogFromProto,
  logEntryFromProto,
  serviceInfoFromProto,
} from "../../api/mapping/mod.ts";
import { REDACTED, redactResource, redactServiceSpec } from "../../api/auth/mod.ts";
import { RESOURCE_TYPES } from "../../resources/mod.ts";
import { formatKmsgRecord } from "../../platform/kmsg/mod.ts";
import { plain } from "../output.ts";
import { formatLogLine } from "../commands/logs.ts";
import { containersDocument, imagesDocument } from "../commands/containers.ts";
import { dependencyDot } from "../dependency_dot.ts";
import { MACHINECTL_VERSION } from "../version.ts";
import type { TarEntry } from "./tar.ts";

/** Deadline of each call. */
const CALL_MS = 20_000;

const PEM_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;

/** `text` with every PEM private key block replaced by {@link REDACTED}. */
export function scrubPrivateKeys(text: string): string {
  return text.replace(PEM_KEY, REDACTED);
}

/** The bundle's files, in archive order (`errors.txt` last). */
export async function collectSupportBundle(
  client: Client<typeof MachineService>,
  endpoint: string,
): Promise<TarEntry[]> {
  const parts = new BundleParts();
  const opts = { timeoutMs: CALL_MS };

  await parts.add("version.yaml", async () => {
    const v = await client.version({}, opts);
    return stringify({
      client: { machinectl: MACHINECTL_VERSION, deno: Deno.version.deno },
      node: { endpoint, ...(toJson(VersionResponseSchema, v) as Record<string, unknown>) },
    });
  });
  await collectResources(parts, client, opts);
  await collectServices(parts, client, opts);
  await collectHostState(parts, client, opts);
  return parts.entries();
}

/** The files collected so far, and the parts that could not be (for `errors.txt`). */
class BundleParts {
  readonly #files: { name: string; text: string }[] = [];
  readonly #errors: string[] = [];

  /** Adds file `name` with what `fn` returns; a failure is listed in `errors.txt` instead. */
  async add(name: string, fn: () => Promise<string>): Promise<void> {
    try {
      this.#files.push({ name, text: await fn() });
    } catch (e) {
      this.#errors.push(`${name}: ${e instanceof ConnectError ? e.message : String(e)}`);
    }
  }

  /** Every file then `errors.txt`, each scrubbed of PEM private key blocks. */
  entries(): TarEntry[] {
    const files = [...this.#files, {
      name: "errors.txt",
      text: this.#errors.length ? this.#errors.join("\n") + "\n" : "every part was collected\n",
    }];
    const enc = new TextEncoder();
    return files.map((f) => ({ name: f.name, data: enc.encode(scrubPrivateKeys(f.text)) }));
  }
}

type CallOpts = { timeoutMs: number };

/** Every resource of every type, and the machine config, redacted for a reader. */
async function collectResources(
  parts: BundleParts,
  client: Client<typeof MachineService>,
  opts: CallOpts,
): Promise<void> {
  for (const type of RESOURCE_TYPES) {
    await parts.add(`resources/${type}.yaml`, async () => {
      const r = await client.list({ type, namespace: "*" }, opts);
      const docs = r.resources.map((p) => plain(redactResource(fromProtoResource(p), "os:reader")));
      return docs.map((d) => stringify(d).trimEnd()).join("\n---\n") + "\n";
    });
  }
  await parts.add("config.yaml", async () => {
    const r = await client.list({ type: "MachineConfig", namespace: "*" }, opts);
    const configs = r.resources.map((p) => redactResource(fromProtoResource(p), "os:reader"));
    return configs.map((c) => stringify(c.spec).trimEnd()).join("\n---\n") + "\n";
  });
}

/** The services, machined's and each service's logs, and the kernel log. */
async function collectServices(
  parts: BundleParts,
  client: Client<typeof MachineService>,
  opts: CallOpts,
): Promise<void> {
  let serviceIds: string[] = [];
  await parts.add("services.yaml", async () => {
    const r = await client.serviceList({}, opts);
    const services = r.services.map(serviceInfoFromProto).map((s) => ({
      ...s,
      spec: redactServiceSpec(s.spec, "reader"),
    }));
    serviceIds = services.map((s) => s.id);
    return stringify(services);
  });
  for (const id of ["machined", ...serviceIds]) {
    await parts.add(`logs/${id}.log`, async () => {
      const lines: string[] = [];
      for await (const m of client.logs({ id, follow: false }, opts)) {
        lines.push(formatLogLine(logEntryFromProto(m), true));
      }
      return lines.join("\n") + "\n";
    });
  }
  await parts.add("dmesg.txt", async () => {
    const lines: string[] = [];
    for await (const m of client.dmesg({ follow: false }, opts)) {
      const r = kernelLogFromProto(m);
      if (r) lines.push("lost" in r ? "(records lost)" : formatKmsgRecord(r));
    }
    return lines.join("\n") + "\n";
  });
}

/** The controller graph, metrics, containers and images, and the host's own state. */
async function collectHostState(
  parts: BundleParts,
  client: Client<typeof MachineService>,
  opts: CallOpts,
): Promise<void> {
  await parts.add("controllers.dot", async () => {
    return dependencyDot((await client.controllerGraph({}, opts)).controllers);
  });
  await parts.add("metrics.txt", async () => (await client.metrics({}, opts)).text);
  await parts.add("containers.yaml", async () => {
    return stringify(containersDocument(await client.containers({}, opts)));
  });
  await parts.add(
    "images.yaml",
    async () => stringify(imagesDocument(await client.images({}, opts))),
  );
  await parts.add(
    "memory.yaml",
    async () => yamlOf(MemoryResponseSchema, await client.memory({}, opts)),
  );
  await parts.add(
    "stats.yaml",
    async () => yamlOf(StatsResponseSchema, await client.stats({}, opts)),
  );
  await parts.add(
    "mounts.yaml",
    async () => yamlOf(MountsResponseSchema, await client.mounts({}, opts)),
  );
  await parts.add("cgroups.yaml", async () => {
    return yamlOf(CgroupsResponseSchema, await client.cgroups({}, opts));
  });
  await parts.add("netstat.yaml", async () => {
    return yamlOf(NetstatResponseSchema, await client.netstat({}, opts));
  });
}

function yamlOf<D extends DescMessage>(schema: D, message: MessageShape<D>): string {
  return stringify(toJson(schema, message));
}
