/**
 * `machinectl service [ID]` lists the supervised services (or one) as a table;
 * `service start|stop|restart ID` controls one (operator role). `get services`
 * stays the ServiceStatus resource view; this is the supervisor's own.
 */
import { serviceInfoFromProto } from "../../api/mapping/mod.ts";
import type { ServiceInfo } from "../../api/gen/machined/v1/machine_pb.ts";
import type { ServiceSpecSpec, ServiceStatusSpec } from "../../resources/mod.ts";
import { type Command, type ConnectionFlagValues, defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { alignTable } from "../output.ts";
import { toJson, toYaml } from "../document_text.ts";
import { esc } from "../terminal_text.ts";
import { OUTPUT_FLAG } from "./observe_format.ts";

/** A service as the table shows it. */
interface ServiceRow {
  id: string;
  spec: ServiceSpecSpec;
  status: ServiceStatusSpec;
}

const HEADER = ["ID", "STATE", "HEALTHY", "RESTARTS", "PID", "LAST EXIT", "MESSAGE"];

export const serviceCommand = defineCommand({
  name: "service",
  aliases: ["services"],
  args: "[ID]",
  summary: "List the supervised services (state, health, restarts, last exit)",
  connects: true,
  flags: {
    ...OUTPUT_FLAG,
  },
  async run({ flags, args, io }) {
    const [id, extra] = args;
    if (extra !== undefined) {
      throw new CliError(
        `service: unexpected "${extra}" (to act on a service: service start|stop|restart ID)`,
        2,
      );
    }
    const format = flags.output;
    using conn = await connectToNode(flags);
    const r = await conn.client.serviceList({}, { timeoutMs: 15_000 });
    let rows = r.services.map(serviceInfoFromProto);
    if (id !== undefined) {
      rows = rows.filter((s) => s.id === id);
      if (rows.length === 0) {
        throw new CliError(
          esc`no service "${id}"; services: ` + r.services.map((s) => esc`${s.id}`).join(", "),
        );
      }
    }
    if (format === "json") io.out(toJson(rows, 2));
    else if (format === "yaml") io.out(toYaml(rows));
    else if (rows.length === 0) io.err("no services");
    else io.out(formatServiceTable(rows));
    return 0;
  },
});

/** The service table: ID, STATE, HEALTHY, RESTARTS, PID, LAST EXIT, MESSAGE. */
export function formatServiceTable(rows: readonly ServiceRow[]): string {
  return alignTable([
    HEADER,
    ...rows.map(({ id, status: s }) => [
      id,
      s.state,
      String(s.healthy),
      String(s.restarts),
      s.pid === null ? "-" : String(s.pid),
      formatExit(s.lastExit),
      s.message,
    ]),
  ]);
}

function formatExit(e: ServiceStatusSpec["lastExit"]): string {
  if (!e) return "-";
  const how = e.signal !== null ? e.signal : `code ${e.code}`;
  return e.killedAfterGrace ? `${how} (killed after grace)` : how;
}

function actionCommand(
  action: "start" | "stop" | "restart",
  summary: string,
  call: (
    inv: { flags: ConnectionFlagValues },
    id: string,
  ) => Promise<{ service?: ServiceInfo; endpoint: string }>,
): Command {
  return defineCommand({
    name: `service ${action}`,
    aliases: [`services ${action}`],
    args: "ID",
    summary,
    connects: true,
    flags: {},
    async run(inv) {
      const [id, extra] = inv.args;
      if (!id || extra !== undefined) {
        throw new CliError(`usage: machinectl service ${action} ID`, 2);
      }
      const { service, endpoint } = await call(inv, id);
      const state = service?.status ? serviceInfoFromProto(service).status.state : "unknown";
      inv.io.out(esc`service "${id}": ${action} done, now ${state} (${endpoint})`);
      return 0;
    },
  });
}

export const serviceStartCommand = actionCommand(
  "start",
  "Start a stopped, finished or failed service",
  async ({ flags }, id) => {
    using conn = await connectToNode(flags);
    const r = await conn.client.serviceStart({ id }, { timeoutMs: 15_000 });
    return { service: r.service, endpoint: conn.endpoint };
  },
);

export const serviceStopCommand = actionCommand(
  "stop",
  "Stop a service until started again (waits until it is down)",
  async ({ flags }, id) => {
    using conn = await connectToNode(flags);
    // Stopping waits for the service's grace period and, past it, the kill.
    const r = await conn.client.serviceStop({ id }, { timeoutMs: 120_000 });
    return { service: r.service, endpoint: conn.endpoint };
  },
);

export const serviceRestartCommand = actionCommand(
  "restart",
  "Restart a service now, resetting its backoff",
  async ({ flags }, id) => {
    using conn = await connectToNode(flags);
    const r = await conn.client.serviceRestart({ id }, { timeoutMs: 15_000 });
    return { service: r.service, endpoint: conn.endpoint };
  },
);
