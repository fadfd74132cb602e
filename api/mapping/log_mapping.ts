/**
 * Log lines (`Logs`) and kernel log records (`Dmesg`) ⇄ their proto messages
 * in machine.proto.
 */
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  type DmesgResponse,
  DmesgResponseSchema,
  type LogsResponse,
  LogsResponseSchema,
  LogStream,
} from "../gen/machined/v1/machine_pb.ts";
import type {
  KmsgGap as KernelLogGap,
  KmsgRecord as KernelLogRecord,
} from "../../platform/kmsg/mod.ts";
import type { LogLine as LogEntry } from "../../logs/mod.ts";
import { enumPair } from "./enum_pair.ts";

const logStream = enumPair<LogEntry["stream"], LogStream>({
  stdout: LogStream.STDOUT,
  stderr: LogStream.STDERR,
  log: LogStream.LOG,
}, "log stream");

/** A log line → one Logs stream message. */
export function logEntryToProto(l: LogEntry): LogsResponse {
  return create(LogsResponseSchema, {
    seq: BigInt(l.seq),
    time: timestampFromMs(l.time),
    stream: logStream.to(l.stream),
    text: l.text,
  });
}

/** One Logs stream message → a log line. @throws ResourceMappingError for an unknown stream. */
export function logEntryFromProto(m: LogsResponse): LogEntry {
  return {
    seq: Number(m.seq),
    time: m.time ? timestampDate(m.time).getTime() : 0,
    stream: logStream.from(m.stream),
    text: m.text,
  };
}

/** A kernel log record or gap → one Dmesg stream message. */
export function kernelLogToProto(r: KernelLogRecord | KernelLogGap): DmesgResponse {
  if ("lost" in r) return create(DmesgResponseSchema, { item: { case: "lost", value: {} } });
  return create(DmesgResponseSchema, {
    item: {
      case: "record",
      value: {
        level: r.level,
        facility: r.facility,
        seq: BigInt(r.seq),
        usec: BigInt(r.usec),
        flags: r.flags,
        text: r.text,
        fields: { ...r.fields },
      },
    },
  });
}

/** One Dmesg stream message → a record or gap; undefined when the message is empty. */
export function kernelLogFromProto(m: DmesgResponse): KernelLogRecord | KernelLogGap | undefined {
  switch (m.item.case) {
    case "lost":
      return { lost: true };
    case "record": {
      const r = m.item.value;
      return {
        level: r.level,
        facility: r.facility,
        seq: Number(r.seq),
        usec: Number(r.usec),
        flags: r.flags,
        text: r.text,
        fields: { ...r.fields },
      };
    }
    default:
      return undefined;
  }
}
