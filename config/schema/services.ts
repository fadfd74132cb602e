/**
 * `machine.services`: the processes machined supervises besides its built-in
 * `containerd`. Cross-service rules (unique ids, known and acyclic
 * `depends_on`, the reserved ids, exactly one health probe) are checked in
 * `semantic_checks.ts` so they are reported even when other fields are bad.
 *
 * @module
 */
import * as v from "valibot";
import { mapOf, mapping } from "./mapping.ts";
import { checkWithHint, quote } from "./hints.ts";
import { SandboxSchema } from "./sandbox.ts";
import {
  absolutePath,
  ByteSize,
  choice,
  Duration,
  HostPort,
  intRange,
  userOrGroup,
} from "./primitives.ts";

/** Service ids: lowercase, start with a letter or digit, at most 63 characters. */
export const SERVICE_ID = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Ids machined provides itself; a config may depend on them but not define them. */
export const BUILTIN_SERVICE_IDS = ["containerd"] as const;

/**
 * Ids a config may not define: the built-in services, and `machined`, the id
 * of machined's own log (`machinectl logs machined`), which a service of that
 * id would hide.
 */
export const RESERVED_SERVICE_IDS = [...BUILTIN_SERVICE_IDS, "machined"] as const;

const ServiceId = v.pipe(
  v.string("expected a service id string"),
  checkWithHint(
    (s: string) => SERVICE_ID.test(s),
    (issue) => `invalid service id ${quote(issue.input)}`,
    () => "lowercase letters, digits, '.', '_' and '-', at most 63 characters",
  ),
  v.metadata({ docType: "service id" }),
);

const Argv = v.pipe(
  v.array(v.string("expected argv entries as strings"), "expected a list of strings (argv)"),
  v.minLength(1, "command must not be empty"),
  checkWithHint(
    (argv: string[]) => argv[0].startsWith("/"),
    (issue) => `argv[0] ${quote(issue.input[0])} is not an absolute path`,
    (argv) => {
      const first = (argv as string[])[0];
      return `machined does not search PATH; write e.g. "/usr/bin/${first}"`;
    },
  ),
  v.metadata({ docType: "list of strings (argv)" }),
);

/** Parses a cgroup `cpu.max` value or a CPU count into `"<quota|max> <period>"`. */
export function parseCpuMax(input: string | number): string | undefined {
  const cpus = typeof input === "number"
    ? input
    : /^[0-9]+(\.[0-9]+)?$/.test(input)
    ? Number(input)
    : NaN;
  if (!Number.isNaN(cpus)) {
    const quota = Math.round(cpus * 100000);
    return Number.isFinite(cpus) && quota >= 1000 ? `${quota} 100000` : undefined;
  }
  const m = /^(max|[0-9]+) ([0-9]+)$/.exec(String(input));
  if (!m) return undefined;
  const period = Number(m[2]);
  if (period < 1000 || period > 1000000) return undefined;
  if (m[1] !== "max" && Number(m[1]) < 1000) return undefined;
  return `${m[1]} ${period}`;
}

const CpuMax = v.pipe(
  v.union([v.string(), v.number()], 'expected a CPU count such as 0.5 or "quota period"'),
  checkWithHint(
    (s: string | number) => parseCpuMax(s) !== undefined,
    (issue) => `invalid cpu_max ${quote(issue.input)}`,
    () => 'a CPU count (0.01 or more, e.g. 0.5) or cgroup form "<quota|max> <period>" in µs',
  ),
  v.transform((s) => parseCpuMax(s) as string),
  v.metadata({ docType: 'number | "quota period"' }),
);

const ExecProbe = mapping({
  command: v.pipe(Argv, v.description("Probe command; exit status 0 means healthy.")),
});
const TcpProbe = mapping({
  address: v.pipe(HostPort, v.description("Healthy when a TCP connection succeeds.")),
});
const HttpProbe = mapping({
  url: v.pipe(
    v.string("expected a URL string"),
    v.check(
      (s: string) => /^https?:\/\/[^\s/]+(\/\S*)?$/.test(s) && URL.canParse(s),
      (issue) => `invalid URL ${quote(issue.input)}; expected http:// or https://`,
    ),
    v.description("Healthy on a 2xx or 3xx response to GET."),
    v.examples(["http://127.0.0.1:8080/healthz"]),
  ),
});

/** A readiness probe; exactly one of `exec`, `tcp`, `http`. */
export const HealthSchema = mapping({
  exec: v.optional(v.pipe(ExecProbe, v.description("Run a command in the service's context."))),
  tcp: v.optional(v.pipe(TcpProbe, v.description("Open a TCP connection."))),
  http: v.optional(v.pipe(HttpProbe, v.description("Send an HTTP GET."))),
  interval: v.optional(v.pipe(Duration, v.description("Time between probes.")), "5s"),
  timeout: v.optional(v.pipe(Duration, v.description("Time one probe may take.")), "2s"),
  start_period: v.optional(
    v.pipe(Duration, v.description("Failures during this time after start do not count.")),
    "0s",
  ),
  success_threshold: v.optional(
    v.pipe(intRange(1, 100, "success_threshold"), v.description("Passes in a row to be ready.")),
    1,
  ),
  failure_threshold: v.optional(
    v.pipe(
      intRange(1, 100, "failure_threshold"),
      v.description("Failures in a row to become not ready."),
    ),
    3,
  ),
});

/** `limits`: cgroup v2 limits of the service's cgroup. */
export const LimitsSchema = mapping({
  memory_max: v.optional(
    v.pipe(ByteSize, v.description("`memory.max`; bytes in the parsed config.")),
  ),
  cpu_max: v.optional(
    v.pipe(CpuMax, v.description('`cpu.max`; normalised to `"<quota|max> <period>"`.')),
  ),
  pids_max: v.optional(
    v.pipe(intRange(1, 4194304, "pids_max"), v.description("`pids.max`.")),
  ),
});

/** One supervised service. */
export const ServiceSchema = mapping({
  id: v.pipe(
    ServiceId,
    v.description("Unique id. `containerd` and `machined` are reserved."),
    v.examples(["payload"]),
  ),
  command: v.pipe(
    Argv,
    v.description("argv; argv[0] is an absolute path (PATH is not searched)."),
    v.examples([["/usr/bin/sleep", "infinity"]]),
  ),
  env: v.optional(
    v.pipe(
      mapOf(
        v.pipe(
          v.string(),
          v.regex(
            /^[A-Za-z_][A-Za-z0-9_]*$/,
            (issue) => `invalid variable name ${quote(issue.input)}`,
          ),
        ),
        v.pipe(
          v.union([v.string(), v.number(), v.boolean()], "expected a string value"),
          v.transform((x) => String(x)),
        ),
        "expected a map of variable name to value",
      ),
      v.description("Environment; the service gets only this plus PATH. Scalars become strings."),
      v.examples([{ LOG_LEVEL: "info" }]),
      v.metadata({ docType: "map of string" }),
    ),
    {},
  ),
  cwd: v.optional(v.pipe(absolutePath("cwd"), v.description("Working directory.")), "/"),
  user: v.optional(v.pipe(userOrGroup("user"), v.description("User to run as.")), 0),
  group: v.optional(v.pipe(userOrGroup("group"), v.description("Primary group.")), 0),
  depends_on: v.optional(
    v.pipe(
      v.array(ServiceId, "expected a list of service ids"),
      v.description("Services that must be ready first. `containerd` may be named."),
      v.examples([["containerd"]]),
    ),
    [],
  ),
  restart: v.optional(
    v.pipe(
      choice(["always", "on-failure", "never"]),
      v.description("When to restart after the process exits."),
    ),
    "always",
  ),
  stop_grace_period: v.optional(
    v.pipe(Duration, v.description("Time between SIGTERM and SIGKILL on stop.")),
    "10s",
  ),
  on_dependency_restart: v.optional(
    v.pipe(
      choice(["restart", "hold"]),
      v.description(
        "When a dependency stops being ready: `restart` stops this service and starts it again once the dependency is ready; `hold` keeps it running.",
      ),
    ),
    "restart",
  ),
  health: v.optional(
    v.pipe(
      HealthSchema,
      v.description("Readiness probe. Without one the service is ready once running."),
    ),
  ),
  limits: v.optional(v.pipe(LimitsSchema, v.description("cgroup v2 resource limits.")), {}),
  restart_on_trusted_roots: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description(
        "Restart this service when the CA bundle changes (`machine.trusted_roots`), for programs that read SSL_CERT_FILE only at start. containerd always is.",
      ),
    ),
    false,
  ),
  sandbox: v.optional(
    v.pipe(
      SandboxSchema,
      v.description(
        "Seccomp profile, capabilities kept, no_new_privs and read-only paths. Omitted: the `default` profile, no capabilities, no_new_privs (docs/hardening.md).",
      ),
    ),
    {
      seccomp: "default",
      capabilities: [],
      no_new_privs: true,
      read_only_paths: [],
      masked_paths: [],
    },
  ),
});

/** `machine.services`. */
export const ServicesSchema = v.pipe(
  v.array(ServiceSchema, "expected a list of services"),
  v.description("Processes to supervise, started in dependency order."),
);

/** A parsed service with defaults filled; durations in ms, sizes in bytes. */
export type ServiceConfig = v.InferOutput<typeof ServiceSchema>;
/** A parsed health probe. */
export type HealthConfig = v.InferOutput<typeof HealthSchema>;
/** Parsed cgroup limits. */
export type LimitsConfig = v.InferOutput<typeof LimitsSchema>;
