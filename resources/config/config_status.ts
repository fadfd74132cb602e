/**
 * ConfigStatus: whether the node has a valid config, and if not, every error
 * with its path and line:column. This is how a node in maintenance says why.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

export const CONFIG_STATUS = "ConfigStatus";
/** The single ConfigStatus's id. */
export const CONFIG_STATUS_ID = "machine";

/** One config error, as shown over the API. */
export interface ConfigIssue {
  readonly path: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly hint?: string;
}

export interface ConfigStatusSpec {
  readonly state: "valid" | "invalid" | "missing";
  readonly source: string;
  readonly errors: readonly ConfigIssue[];
}

export const configStatusDescriptor: ResourceDescriptor<typeof CONFIG_STATUS, ConfigStatusSpec> = {
  type: CONFIG_STATUS,
  namespace: "config",
  aliases: ["configstatus", "configstatuses", "cs"],
  description: "Whether the machine config is valid, with every error when it is not",
  columns: [
    { header: "STATE", value: (s) => s.state },
    { header: "SOURCE", value: (s) => s.source },
    { header: "ERRORS", value: (s) => String(s.errors.length) },
  ],
};
