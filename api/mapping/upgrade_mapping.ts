/**
 * UpgradeStatus ⇄ its proto message (upgrade.proto): unions become enums,
 * the slot letter stays a string checked on the way back.
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/upgrade_pb.ts";
import type {
  FloorSource,
  UpgradeOutcome,
  UpgradeSlotState,
  UpgradeSlotStatus,
  UpgradeStatusSpec,
} from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";
import { ResourceMappingError } from "./mapping_error.ts";

const slotState = enumPair<UpgradeSlotState, pb.UpgradeSlotState>({
  empty: pb.UpgradeSlotState.EMPTY,
  blessed: pb.UpgradeSlotState.BLESSED,
  trial: pb.UpgradeSlotState.TRIAL,
  bad: pb.UpgradeSlotState.BAD,
}, "upgrade slot state");
const outcome = enumPair<UpgradeOutcome, pb.UpgradeOutcome>({
  none: pb.UpgradeOutcome.NONE,
  armed: pb.UpgradeOutcome.ARMED,
  upgraded: pb.UpgradeOutcome.UPGRADED,
  "rolled-back": pb.UpgradeOutcome.ROLLED_BACK,
  refused: pb.UpgradeOutcome.REFUSED,
  unknown: pb.UpgradeOutcome.UNKNOWN,
}, "upgrade outcome");
const floorSource = enumPair<FloorSource, pb.FloorSource>({
  none: pb.FloorSource.NONE,
  state: pb.FloorSource.STATE,
  running: pb.FloorSource.RUNNING,
  esp: pb.FloorSource.ESP,
}, "floor source");

/** UpgradeStatus → proto. */
export function upgradeStatusToProto(s: UpgradeStatusSpec): pb.UpgradeStatusSpec {
  return create(pb.UpgradeStatusSpecSchema, {
    booted: s.booted,
    slots: s.slots.map((x) =>
      create(pb.UpgradeSlotStatusSchema, { ...x, state: slotState.to(x.state) })
    ),
    floor: s.floor,
    floorSource: floorSource.to(s.floorSource),
    storedFloor: s.storedFloor,
    last: create(pb.UpgradeLastOutcomeSchema, { ...s.last, outcome: outcome.to(s.last.outcome) }),
  });
}

/** Proto → UpgradeStatus. @throws ResourceMappingError for an unknown enum value or slot. */
export function upgradeStatusFromProto(m: pb.UpgradeStatusSpec): UpgradeStatusSpec {
  const last = m.last;
  return {
    booted: m.booted,
    slots: m.slots.map(slotFromProto),
    floor: m.floor,
    floorSource: floorSource.from(m.floorSource),
    storedFloor: m.storedFloor,
    last: {
      outcome: last ? outcome.from(last.outcome) : "none",
      version: last?.version ?? "",
      slot: last?.slot ?? "",
      reason: last?.reason ?? "",
      at: last?.at ?? "",
    },
  };
}

function slotFromProto(x: pb.UpgradeSlotStatus): UpgradeSlotStatus {
  if (x.slot !== "A" && x.slot !== "B") {
    throw new ResourceMappingError(
      "slot",
      `Unknown slot ${JSON.stringify(x.slot)} (expected A or B)`,
    );
  }
  return {
    slot: x.slot,
    booted: x.booted,
    state: slotState.from(x.state),
    version: x.version,
    generation: x.generation,
    triesLeft: x.triesLeft,
    entry: x.entry,
  };
}
