/**
 * Role-based access to the API: the least role each RPC needs, as a table typed
 * over every method of MachineService (a new RPC fails type-checking until it
 * is given a role). Roles come from the client certificate's O= (pki/role.ts).
 */
import { PermissionDeniedError } from "../errors/mod.ts";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { type Role, ROLES } from "../../pki/mod.ts";

/** The local (camelCase) name of every MachineService RPC. */
export type MachineMethod = keyof typeof MachineService.method;

/** The least role needed for each RPC. */
export const METHOD_ROLES: { readonly [M in MachineMethod]: Role } = {
  version: "os:reader",
  get: "os:reader",
  list: "os:reader",
  watch: "os:reader",
  events: "os:reader",
  reboot: "os:operator",
  shutdown: "os:operator",
  reset: "os:admin",
  // An image replaces everything the node runs: admin, like Reset.
  upgrade: "os:admin",
  rollback: "os:admin",
  // Opens a volume whose key the node lost; a passphrase guess costs argon2id: budgeted (unlock_budget.ts).
  unlockVolume: "os:operator",
  generateClientConfiguration: "os:admin",
  serviceList: "os:reader",
  serviceStart: "os:operator",
  serviceStop: "os:operator",
  serviceRestart: "os:operator",
  logs: "os:reader",
  dmesg: "os:reader",
  applyConfiguration: "os:admin",
  memory: "os:reader",
  stats: "os:reader",
  processes: "os:reader",
  mounts: "os:reader",
  cgroups: "os:reader",
  time: "os:reader",
  netstat: "os:reader",
  // observability: containers, support, dependencies
  containers: "os:reader",
  images: "os:reader",
  // Pulling writes to containerd's store on /var and spends the node's network: an operator's act.
  imagePull: "os:operator",
  metrics: "os:reader",
  controllerGraph: "os:reader",
  // Files: a reader may call them, but sees only READER_ROOTS (api/server/files/roots.ts).
  fileList: "os:reader",
  fileRead: "os:reader",
  diskUsage: "os:reader",
  fileCopy: "os:reader",
};

/**
 * Whether each RPC changes the node. machined writes one audit line to its
 * log (`machinectl logs machined`) for every call of a mutating RPC, with the
 * caller's CN, role and certificate serial (api/server/audit.ts). Typed over
 * every method, so a new RPC does not compile until it is classified.
 * ApplyConfiguration counts as mutating even as a dry run (logged with
 * `dryRun=true`).
 */
export const MUTATING: { readonly [M in MachineMethod]: boolean } = {
  version: false,
  get: false,
  list: false,
  watch: false,
  events: false,
  reboot: true,
  shutdown: true,
  reset: true,
  upgrade: true,
  rollback: true,
  unlockVolume: true,
  generateClientConfiguration: true,
  serviceList: false,
  serviceStart: true,
  serviceStop: true,
  serviceRestart: true,
  logs: false,
  dmesg: false,
  applyConfiguration: true,
  memory: false,
  stats: false,
  processes: false,
  mounts: false,
  cgroups: false,
  time: false,
  netstat: false,
  // observability: containers, support, dependencies
  containers: false,
  images: false,
  imagePull: true,
  metrics: false,
  controllerGraph: false,
  fileList: false,
  fileRead: false,
  diskUsage: false,
  fileCopy: false,
};

/** Whether an RPC, by its proto name (`Reboot`), is {@link MUTATING}; false for unknown ones. */
export function isMutating(method: string): boolean {
  const local = MachineService.methods.find((m) => m.name === method)?.localName;
  return local !== undefined && MUTATING[local as MachineMethod];
}

/**
 * Arguments that need more than their RPC's least role, each with the role
 * it needs and why. `Time` is a reader RPC, but naming a server makes the
 * node send UDP to it: a reader may name only the node's own
 * `machine.time.servers`; any other host needs os:operator. (Talos lets a
 * reader's TimeCheck name any server; here a reader cannot aim the node's
 * packets.) Pinned by hand in rbac_test.ts and apid/rbac_matrix_test.ts.
 */
export const ARGUMENT_ROLES = {
  timeConfiguredServer: {
    method: "time",
    argument: "server in machine.time.servers",
    role: "os:reader",
  },
  timeOtherServer: { method: "time", argument: "any other server", role: "os:operator" },
  // api/server/files/roots.ts decides; these rows pin it for FileList (FileRead, DiskUsage, FileCopy the same).
  fileReaderRoot: {
    method: "fileList",
    argument: "a path under /var/log or /system/state",
    role: "os:reader",
  },
  filePrivilegedRoot: {
    method: "fileList",
    argument: "a path under /var, /system, /etc, /run, /proc or /sys",
    role: "os:operator",
  },
} as const satisfies Record<string, { method: MachineMethod; argument: string; role: Role }>;

/**
 * Whether `role` may have the node query `host` (already parsed, see
 * api/server/time_query.ts), given the configured servers.
 * @throws PermissionDeniedError saying which servers the role may name, and who may name others
 */
export function authorizeTimeServer(
  role: Role,
  host: string,
  configured: readonly string[],
): void {
  const norm = (h: string) => h.toLowerCase().replace(/\.$/, "");
  const own = configured.some((c) => norm(c) === norm(host));
  const needed = own
    ? ARGUMENT_ROLES.timeConfiguredServer.role
    : ARGUMENT_ROLES.timeOtherServer.role;
  if (roleSatisfies(role, needed)) return;
  const list = configured.length === 0 ? "none" : configured.map((c) => `"${c}"`).join(", ");
  throw new PermissionDeniedError(
    `Role "${role}" may query only the node's configured time servers (${list}); ` +
      `naming "${host}" needs "${needed}" or higher, because it makes the node send UDP to it`,
    { context: { role, host, needed } },
  );
}

/** Services any authenticated client may call (gRPC reflection). */
export const OPEN_SERVICES: readonly string[] = [
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
];

/** True when `role` is at least `needed` (ROLES is ordered most privileged first). */
export function roleSatisfies(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) <= ROLES.indexOf(needed);
}

/**
 * Whether `role` may call `service`/`method` (method is the proto name, e.g. `Reboot`).
 * Unknown services and methods are refused: the table is the allow-list.
 */
export function isAllowed(role: Role, service: string, method: string): boolean {
  if (OPEN_SERVICES.includes(service)) return true;
  if (service !== MachineService.typeName) return false;
  const needed = neededRole(method);
  return needed !== undefined && roleSatisfies(role, needed);
}

/** The role an RPC needs, by its proto name (`GenerateClientConfiguration`). */
export function neededRole(method: string): Role | undefined {
  const local = MachineService.methods.find((m) => m.name === method)?.localName;
  return local === undefined ? undefined : METHOD_ROLES[local as MachineMethod];
}

/**
 * @throws PermissionDeniedError naming the role and the method when
 *   `role` may not call it.
 */
export function authorize(role: Role, service: string, method: string): void {
  if (isAllowed(role, service, method)) return;
  const needed = service === MachineService.typeName ? neededRole(method) : undefined;
  throw new PermissionDeniedError(
    `Role "${role}" may not call ${service}/${method}` +
      (needed ? ` (needs "${needed}" or higher)` : ""),
    { context: { role, service, method, needed } },
  );
}
