/**
 * Label selectors between the store's typed terms and the API's `LabelTerm`
 * messages. The CLI parses text with `parseLabelSelector` and sends terms.
 */
import { create } from "@bufbuild/protobuf";
import {
  LabelOp,
  type LabelTerm as ProtoLabelTerm,
  LabelTermSchema,
} from "../gen/machined/v1/machine_pb.ts";
import type { LabelSelector, LabelTerm } from "../../runtime/mod.ts";
import { assertNever } from "../../resources/mod.ts";
import { ResourceMappingError } from "./mapping_error.ts";

/** Store selector → API terms. */
export function selectorToProto(selector: LabelSelector): ProtoLabelTerm[] {
  return selector.map((term) => {
    switch (term.op) {
      case "exists":
        return create(LabelTermSchema, { key: term.key, op: LabelOp.EXISTS });
      case "notExists":
        return create(LabelTermSchema, { key: term.key, op: LabelOp.NOT_EXISTS });
      case "equal":
        return create(LabelTermSchema, { key: term.key, op: LabelOp.EQUAL, values: [term.value] });
      case "notEqual":
        return create(LabelTermSchema, {
          key: term.key,
          op: LabelOp.NOT_EQUAL,
          values: [term.value],
        });
      case "in":
        return create(LabelTermSchema, { key: term.key, op: LabelOp.IN, values: [...term.values] });
      default:
        return assertNever(term, "label term");
    }
  });
}

/**
 * API terms → store selector.
 * @throws ResourceMappingError for an empty key, an unspecified op, or a missing value.
 */
export function selectorFromProto(terms: readonly ProtoLabelTerm[]): LabelSelector {
  return terms.map((t, i): LabelTerm => {
    const field = `selector[${i}]`;
    if (t.key === "") throw new ResourceMappingError(field, `Label term ${i} has an empty key`);
    const one = () => {
      if (t.values.length !== 1) {
        throw new ResourceMappingError(
          field,
          `Label term "${t.key}" needs exactly one value, got ${t.values.length}`,
        );
      }
      return t.values[0];
    };
    switch (t.op) {
      case LabelOp.EXISTS:
        return { key: t.key, op: "exists" };
      case LabelOp.NOT_EXISTS:
        return { key: t.key, op: "notExists" };
      case LabelOp.EQUAL:
        return { key: t.key, op: "equal", value: one() };
      case LabelOp.NOT_EQUAL:
        return { key: t.key, op: "notEqual", value: one() };
      case LabelOp.IN:
        return { key: t.key, op: "in", values: [...t.values] };
      case LabelOp.UNSPECIFIED:
        throw new ResourceMappingError(field, `Label term "${t.key}" has no operator`);
      default:
        throw new ResourceMappingError(field, `Label term "${t.key}" has unknown operator ${t.op}`);
    }
  });
}
