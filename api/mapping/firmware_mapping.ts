/**
 * SecureBootStatus ⇄ its proto message (firmware.proto): the switches and the lockdown mode
 * become enums; the key databases and PCRs copy field for field.
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/firmware_pb.ts";
import type {
  FirmwareSwitch,
  KeyDatabaseStatus,
  LockdownMode,
  SecureBootStatusSpec,
} from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";

const firmwareSwitch = enumPair<FirmwareSwitch, pb.FirmwareSwitch>({
  on: pb.FirmwareSwitch.ON,
  off: pb.FirmwareSwitch.OFF,
  unknown: pb.FirmwareSwitch.UNKNOWN,
}, "firmware switch");
const lockdownMode = enumPair<LockdownMode, pb.LockdownMode>({
  none: pb.LockdownMode.NONE,
  integrity: pb.LockdownMode.INTEGRITY,
  confidentiality: pb.LockdownMode.CONFIDENTIALITY,
  unknown: pb.LockdownMode.UNKNOWN,
}, "lockdown mode");

function databaseToProto(d: KeyDatabaseStatus): pb.KeyDatabaseStatus {
  return create(pb.KeyDatabaseStatusSchema, {
    ...d,
    certificates: d.certificates.map((c) => create(pb.SecureBootCertificateSchema, c)),
  });
}

function databaseFromProto(d: pb.KeyDatabaseStatus | undefined): KeyDatabaseStatus {
  return {
    present: d?.present ?? false,
    certificates: (d?.certificates ?? []).map((c) => ({
      subject: c.subject,
      sha256: c.sha256,
      owner: c.owner,
    })),
    hashes: d?.hashes ?? 0,
    other: d?.other ?? 0,
    reason: d?.reason ?? "",
  };
}

/** SecureBootStatus → proto. */
export function secureBootStatusToProto(s: SecureBootStatusSpec): pb.SecureBootStatusSpec {
  return create(pb.SecureBootStatusSpecSchema, {
    efi: s.efi,
    secureBoot: firmwareSwitch.to(s.secureBoot),
    setupMode: firmwareSwitch.to(s.setupMode),
    reason: s.reason,
    lockdown: lockdownMode.to(s.lockdown),
    pk: databaseToProto(s.pk),
    kek: databaseToProto(s.kek),
    db: databaseToProto(s.db),
    tpm: s.tpm,
    pcrs: s.pcrs.map((p) => create(pb.PcrValueSchema, p)),
  });
}

/** Proto → SecureBootStatus. @throws ResourceMappingError for an unknown enum value. */
export function secureBootStatusFromProto(m: pb.SecureBootStatusSpec): SecureBootStatusSpec {
  return {
    efi: m.efi,
    secureBoot: firmwareSwitch.from(m.secureBoot),
    setupMode: firmwareSwitch.from(m.setupMode),
    reason: m.reason,
    lockdown: lockdownMode.from(m.lockdown),
    pk: databaseFromProto(m.pk),
    kek: databaseFromProto(m.kek),
    db: databaseFromProto(m.db),
    tpm: m.tpm,
    pcrs: m.pcrs.map((p) => ({ index: p.index, sha256: p.sha256 })),
  };
}
