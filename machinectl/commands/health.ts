/**
 * `machinectl health`: one verdict over the node's stage, services, container
 * runtime, time sync, certificates (the node's CA from its MachineConfig, the
 * server certificate its API presents in the TLS handshake, and this
 * context's client certificate) and upgrade trial, read with List
 * (so a reader may run it). Exits 1 when a check fails, so scripts can wait
 * on it; warnings (a certificate near expiry, a slot on trial) exit 0.
 */
import * as x509 from "@peculiar/x509";
import { serverCertificate } from "../../api/client/mod.ts";
import { fromProtoResource } from "../../api/mapping/mod.ts";
import type { AnyMachineResource } from "../../api/mapping/mod.ts";
import { readClientConfig, resolveCredentials } from "../../pki/mod.ts";
import type {
  MachineConfigSpec,
  MachineStatusSpec,
  RuntimeStatusSpec,
  ServiceStatusSpec,
  TimeStatusSpec,
  UpgradeStatusSpec,
} from "../../resources/mod.ts";
import { defineCommand } from "../command.ts";
import {
  clientConfigPath,
  type ConnectionFlags,
  connectToNode,
  endpointHostPort,
  type NodeConnection,
} from "../connection.ts";
import { CliError } from "../io.ts";
import { alignTable } from "../output.ts";
import { escapeText } from "../terminal_text.ts";
import { toJson } from "../document_text.ts";
import { TABLE_OR_JSON_FLAG } from "./observe_format.ts";
import { assessHealth, type HealthCheck, type HealthInput, healthy } from "./health_checks.ts";

const TYPES = [
  "MachineStatus",
  "ServiceStatus",
  "RuntimeStatus",
  "TimeStatus",
  "UpgradeStatus",
  "MachineConfig",
] as const;

export const healthCommand = defineCommand({
  name: "health",
  summary: "One verdict: stage, services, runtime, time sync, certificates, upgrade trial",
  connects: true,
  flags: {
    ...TABLE_OR_JSON_FLAG,
  },
  async run({ flags, args, io }) {
    if (args.length > 0) throw new CliError(`health: unexpected "${escapeText(args[0])}"`, 2);
    const format = flags.output;
    using conn = await connectToNode(flags);
    const byType = new Map<string, AnyMachineResource[]>();
    for (const type of TYPES) {
      const r = await conn.client.list({ type, namespace: "*" }, { timeoutMs: 10_000 });
      byType.set(type, r.resources.map((p) => fromProtoResource(p)));
    }
    const input = healthInput(byType, await clientCertificate(flags), await served(conn));
    const checks = assessHealth(input, Date.now());
    io.out(format === "json" ? toJson(checks, 2) : formatHealth(checks));
    return healthy(checks) ? 0 : 1;
  },
});

/** The checks as a table, details escaped (they carry the node's messages). Pure. */
export function formatHealth(checks: readonly HealthCheck[]): string {
  const table = alignTable([
    ["CHECK", "STATUS", "DETAIL"],
    ...checks.map((c) => [escapeText(c.check), c.status.toUpperCase(), escapeText(c.detail)]),
  ]);
  return `${table}\n${healthy(checks) ? "healthy" : "UNHEALTHY"}`;
}

/**
 * The health input from the listed resources and the expiry of this context's
 * client certificate and of the node's server certificate.
 */
export function healthInput(
  byType: ReadonlyMap<string, readonly AnyMachineResource[]>,
  client?: Date,
  server?: Date,
): HealthInput {
  const first = <T>(t: string) => byType.get(t)?.[0]?.spec as T | undefined;
  const certificates: { name: string; notAfter: Date }[] = [];
  const caPem: string | undefined = first<MachineConfigSpec>("MachineConfig")?.config.machine.ca
    ?.crt;
  const ca = caPem ? notAfterOf(caPem) : undefined;
  if (ca) certificates.push({ name: "node CA", notAfter: ca });
  if (server) certificates.push({ name: "server", notAfter: server });
  if (client) certificates.push({ name: "client", notAfter: client });
  return {
    machine: first<MachineStatusSpec>("MachineStatus"),
    services: (byType.get("ServiceStatus") ?? []).map((r) => ({
      id: r.metadata.id,
      spec: r.spec as ServiceStatusSpec,
    }))
      .sort((a, b) => a.id < b.id ? -1 : 1),
    runtime: first<RuntimeStatusSpec>("RuntimeStatus"),
    time: first<TimeStatusSpec>("TimeStatus"),
    upgrade: first<UpgradeStatusSpec>("UpgradeStatus"),
    certificates,
  };
}

function notAfterOf(pem: string): Date | undefined {
  try {
    return new x509.X509Certificate(pem).notAfter;
  } catch {
    return undefined;
  }
}

async function clientCertificate(flags: ConnectionFlags): Promise<Date | undefined> {
  try {
    const creds = resolveCredentials(
      await readClientConfig(clientConfigPath(flags)),
      flags.context,
    );
    return notAfterOf(creds.certPem);
  } catch {
    return undefined;
  }
}

/**
 * When the certificate the node's API serves expires, read from a handshake
 * with this context's credentials; undefined with `--insecure` (no CA to
 * verify it) or when the handshake fails (the List calls above already
 * reported an unreachable node).
 */
async function served(conn: NodeConnection): Promise<Date | undefined> {
  const creds = conn.credentials;
  const at = endpointHostPort(conn.endpoint);
  if (!creds || !at) return undefined;
  try {
    const cert = await serverCertificate({
      ...at,
      caPem: creds.caPem,
      certPem: creds.certPem,
      keyPem: creds.keyPem,
    });
    return cert.notAfter;
  } catch {
    return undefined;
  }
}
