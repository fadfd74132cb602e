/**
 * The audit trail of the API: machined writes one line to its own log (the
 * `machined` log, `machinectl logs machined`) for every call of a mutating
 * RPC (api/auth/rbac.ts `MUTATING`), naming the caller's certificate CN, role
 * and serial as apid verified them, what was asked (service id, dry run, apply mode or confirm,
 * issued role and name) and how it ended (`ok` or the Connect code). Refused
 * calls are logged too: the interceptor sits outside machined's RBAC check.
 */
import { durationMs } from "@bufbuild/protobuf/wkt";
import { Code, type Interceptor } from "@connectrpc/connect";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { callerKey, isMutating, type MachineMethod } from "../auth/mod.ts";
import { applyModeFromProto, roleFromProto } from "../mapping/mod.ts";
import { codeOf } from "./errors.ts";

/** Where audit lines go: machined's logger (subject `audit`). */
export interface AuditLog {
  info(subject: string, message: string, fields?: Record<string, unknown>): void;
  warn(subject: string, message: string, fields?: Record<string, unknown>): void;
}

type Details = (message: Record<string, unknown>) => Record<string, unknown>;

const serviceId: Details = (m) => ({ id: m.id });

/** What each mutating RPC's line says about the request, besides the caller. */
const DETAILS: Partial<Record<MachineMethod, Details>> = {
  serviceStart: serviceId,
  serviceStop: serviceId,
  serviceRestart: serviceId,
  applyConfiguration: (m) => ({
    dryRun: m.dryRun === true,
    ...(m.mode ? { mode: auditMode(m.mode as number) } : {}),
    ...(m.confirm ? { confirm: true } : {}),
    // How many patches, never what they hold (a patch may carry a new secret).
    ...(Array.isArray(m.patches) && m.patches.length ? { patches: m.patches.length } : {}),
    ...(m.baseSha256 ? { base: String(m.baseSha256).slice(0, 12) } : {}),
  }),
  imagePull: (m) => ({ image: m.image }),
  // The volume only: the passphrase never reaches a log line.
  unlockVolume: (m) => ({ volume: m.volume }),
  // The first phase (no challenge) only previews; the second wipes.
  reset: (m) => ({ confirm: m.challenge !== "", mode: m.mode as number, powerOff: m.powerOff }),
  generateClientConfiguration: (m) => ({
    issuedRole: issuedRole(m.role as number),
    issuedName: m.name,
    ...(m.lifetime ? { lifetimeMs: durationMs(m.lifetime as Duration) } : {}),
  }),
};

/**
 * An interceptor writing one audit line per mutating call once it has
 * answered (or failed). Non-mutating calls pass untouched.
 */
export function createAuditInterceptor(log: AuditLog): Interceptor {
  return (next) => async (req) => {
    if (!isMutating(req.method.name)) return next(req);
    const caller = req.contextValues.get(callerKey);
    const details = req.stream ? {} : DETAILS[req.method.localName as MachineMethod]?.(
      req.message as unknown as Record<string, unknown>,
    ) ?? {};
    const fields = (outcome: string) => ({
      cn: caller?.name ?? "",
      role: caller?.role ?? "",
      serial: caller?.serialNumber ?? "",
      ...details,
      outcome,
    });
    try {
      const res = await next(req);
      log.info("audit", req.method.name, fields("ok"));
      return res;
    } catch (e) {
      log.warn("audit", req.method.name, fields(Code[codeOf(e)]));
      throw e;
    }
  };
}

function issuedRole(role: number): string {
  try {
    return roleFromProto(role);
  } catch {
    return `unknown(${role})`;
  }
}

function auditMode(mode: number): string {
  try {
    return applyModeFromProto(mode);
  } catch {
    return `unknown(${mode})`;
  }
}
