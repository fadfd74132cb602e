/**
 * What `machinectl health` judges, as a pure function of the resources it
 * read (and the certificates it holds), so every verdict is testable without
 * a node. One check per line: stage, each service, the container runtime,
 * time sync, certificates' expiry, the upgrade trial.
 */
import type {
  MachineStatusSpec,
  RuntimeStatusSpec,
  ServiceStatusSpec,
  TimeStatusSpec,
  UpgradeStatusSpec,
} from "../../resources/mod.ts";

/** What health read from the node and the client. */
export interface HealthInput {
  readonly machine?: MachineStatusSpec;
  readonly services: readonly { id: string; spec: ServiceStatusSpec }[];
  readonly runtime?: RuntimeStatusSpec;
  readonly time?: TimeStatusSpec;
  readonly upgrade?: UpgradeStatusSpec;
  /** Certificates by name (`node CA`, `server`, `client`), with their expiry. */
  readonly certificates: readonly { name: string; notAfter: Date }[];
}

/** One verdict. `warn` does not make the node unhealthy; `fail` does. */
export interface HealthCheck {
  readonly check: string;
  readonly status: "ok" | "warn" | "fail";
  readonly detail: string;
}

/** A certificate this close to its expiry is a warning. */
export const CERT_WARN_DAYS = 30;
const DAY_MS = 86_400_000;

/** Every check, in a fixed order. Pure. */
export function assessHealth(h: HealthInput, now: number): HealthCheck[] {
  return [
    stage(h.machine),
    ...h.services.map((s) => service(s.id, s.spec)),
    runtime(h.runtime),
    time(h.time),
    ...h.certificates.map((c) => certificate(c.name, c.notAfter, now)),
    upgrade(h.upgrade),
  ];
}

/** True when no check failed. */
export function healthy(checks: readonly HealthCheck[]): boolean {
  return checks.every((c) => c.status !== "fail");
}

function stage(m: MachineStatusSpec | undefined): HealthCheck {
  if (!m) return { check: "stage", status: "fail", detail: "no MachineStatus" };
  const unmet = m.unmetConditions.map((u) => `${u.name}: ${u.reason}`).join("; ");
  if (m.ready) return { check: "stage", status: "ok", detail: `${m.stage}, ready` };
  return {
    check: "stage",
    status: "fail",
    detail: `${m.stage}, not ready${unmet ? `: ${unmet}` : ""}`,
  };
}

function service(id: string, s: ServiceStatusSpec): HealthCheck {
  const check = `service ${id}`;
  const detail = `${s.state}${s.healthy ? ", healthy" : ""}${s.message ? `: ${s.message}` : ""}`;
  if (s.state === "running" && s.healthy) return { check, status: "ok", detail };
  // Exited and not restarted: a one-shot's end, or stopped on request.
  if (s.state === "finished") return { check, status: "warn", detail };
  return { check, status: "fail", detail };
}

function runtime(r: RuntimeStatusSpec | undefined): HealthCheck {
  const check = "runtime (CRI)";
  if (!r) {
    return { check, status: "warn", detail: "no RuntimeStatus: this node runs no containerd" };
  }
  const name = `${r.runtimeName} ${r.runtimeVersion}`.trim();
  if (r.ready && r.networkReady) return { check, status: "ok", detail: `${name}, ready` };
  // The payload waits for RuntimeReady alone; NetworkReady needs a CNI config, which a node whose
  // payload uses the host's network never has (the default node from `deno task up`).
  if (r.ready) {
    return { check, status: "warn", detail: `${name}, ready; network not ready (no CNI)` };
  }
  const why = r.lastError ? `: ${r.lastError}` : "";
  return { check, status: "fail", detail: `${name || r.socket}, not ready${why}` };
}

function time(t: TimeStatusSpec | undefined): HealthCheck {
  const check = "time sync";
  if (!t) return { check, status: "warn", detail: "no TimeStatus" };
  if (t.disabled) return { check, status: "warn", detail: "disabled by the config" };
  if (t.synced) {
    const off = t.offsetMs === null ? "" : `, offset ${t.offsetMs.toFixed(1)} ms`;
    return { check, status: "ok", detail: `synced with ${t.server}${off}` };
  }
  return { check, status: "fail", detail: `not synced${t.lastError ? `: ${t.lastError}` : ""}` };
}

function certificate(name: string, notAfter: Date, now: number): HealthCheck {
  const check = `certificate ${name}`;
  const days = Math.floor((notAfter.getTime() - now) / DAY_MS);
  const when = notAfter.toISOString();
  if (notAfter.getTime() <= now) return { check, status: "fail", detail: `expired on ${when}` };
  if (days < CERT_WARN_DAYS) {
    return { check, status: "warn", detail: `expires in ${days} days (${when})` };
  }
  return { check, status: "ok", detail: `expires in ${days} days (${when})` };
}

function upgrade(u: UpgradeStatusSpec | undefined): HealthCheck {
  const check = "upgrade";
  if (!u) return { check, status: "ok", detail: "no UpgradeStatus (dev mode or not yet known)" };
  const booted = u.slots.find((s) => s.booted);
  if (booted?.state === "trial") {
    return {
      check,
      status: "warn",
      detail: `slot ${booted.slot} (${booted.version}) on trial, ${booted.triesLeft} tries left`,
    };
  }
  if (u.last.outcome === "rolled-back") {
    return {
      check,
      status: "warn",
      detail: `rolled back from ${u.last.version}: ${u.last.reason}`,
    };
  }
  const slot = booted
    ? `slot ${booted.slot} (${booted.version}) ${booted.state}`
    : "no booted slot";
  return { check, status: "ok", detail: slot };
}
