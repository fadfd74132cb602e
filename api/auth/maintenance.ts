/**
 * What a node in maintenance mode (no CA yet: a generic image waiting for its
 * config) answers without a client certificate: Version, a read-only view of
 * the hardware and network (Get and List of a closed set of types), and
 * ApplyConfiguration, and UnlockVolume of STATE (a node whose config is on an
 * encrypted STATE no token-only key opens waits for it in maintenance; the
 * volume unlocker refuses it unless STATE is locked). Everything else is
 * refused with PermissionDenied. apid
 * checks it at the edge and machined again behind the socket. The table is
 * typed over every RPC, so a new one does not compile until it is classified.
 */
import { PermissionDeniedError } from "../errors/mod.ts";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { resolveResourceType, type ResourceType } from "../../resources/mod.ts";
import type { CallerIdentity } from "./identity.ts";
import type { MachineMethod } from "./rbac.ts";

/** Whether each RPC is answered in maintenance mode without a client certificate. */
export const MAINTENANCE_METHODS: { readonly [M in MachineMethod]: boolean } = {
  version: true,
  get: true,
  list: true,
  watch: false,
  events: false,
  reboot: false,
  shutdown: false,
  reset: false,
  upgrade: false,
  rollback: false,
  // STATE only, and only while boot waits for it (its config is on it): the passphrase is the
  // credential, within UnlockVolume's budget (docs/decisions.md).
  unlockVolume: true,
  generateClientConfiguration: false,
  serviceList: false,
  serviceStart: false,
  serviceStop: false,
  serviceRestart: false,
  logs: false,
  dmesg: false,
  applyConfiguration: true,
  // Observing the node needs a client certificate: processes, sockets and
  // metrics say more than a stranger on the network should learn.
  memory: false,
  stats: false,
  processes: false,
  mounts: false,
  cgroups: false,
  time: false,
  netstat: false,
  containers: false,
  images: false,
  imagePull: false,
  metrics: false,
  controllerGraph: false,
  fileList: false,
  fileRead: false,
  diskUsage: false,
  fileCopy: false,
};

/** The types Get and List show in maintenance mode: hardware and network, nothing secret. */
export const MAINTENANCE_TYPES: readonly ResourceType[] = [
  "MachineStatus",
  "DiskStatus",
  "DiscoveredVolume",
  "LinkStatus",
  "AddressStatus",
  "RouteStatus",
];

/** The identity apid forwards for a caller without a certificate, in maintenance mode. */
export const MAINTENANCE_CALLER: CallerIdentity = {
  name: "maintenance",
  role: "os:reader",
  serialNumber: "",
  maintenance: true,
};

/**
 * @throws PermissionDeniedError when `method` (proto name) of `service`
 *   is not answered in maintenance mode, or `message` names a type outside
 *   {@link MAINTENANCE_TYPES}.
 */
export function authorizeMaintenance(service: string, method: string, message?: unknown): void {
  const local = service === MachineService.typeName
    ? MachineService.methods.find((m) => m.name === method)?.localName as MachineMethod | undefined
    : undefined;
  if (!local || !MAINTENANCE_METHODS[local]) {
    throw new PermissionDeniedError(
      `${service}/${method} is not available in maintenance mode: the node has no config yet; ` +
        `only Version, Get/List of hardware and network, ApplyConfiguration and UnlockVolume ` +
        `of a locked STATE are answered ` +
        `(machinectl apply-config --insecure)`,
      { context: { service, method } },
    );
  }
  if (local === "unlockVolume") {
    const volume = (message as { volume?: unknown } | undefined)?.volume;
    if (volume === "STATE") return;
    throw new PermissionDeniedError(
      `UnlockVolume of "${String(volume)}" is not available in maintenance mode (only STATE, ` +
        `whose config boot is waiting for)`,
      { context: { method, volume: String(volume) } },
    );
  }
  if (local !== "get" && local !== "list") return;
  const typeName = (message as { type?: unknown } | undefined)?.type;
  const type = typeof typeName === "string" ? resolveResourceType(typeName) : undefined;
  if (!type || !MAINTENANCE_TYPES.includes(type)) {
    throw new PermissionDeniedError(
      `${method} of "${String(typeName)}" is not available in maintenance mode ` +
        `(only ${MAINTENANCE_TYPES.join(", ")})`,
      { context: { method, type: String(typeName) } },
    );
  }
}
