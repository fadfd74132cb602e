/**
 * The image's contract with the node: disk plan, GPT access, ESP loader entries, Pi boot config, kernel command line, V8 flags, version, system extensions.
 * @module
 */
export * from "./cmdline.ts";
export * from "./disk_plan.ts";
export * from "./extensions.ts";
export * from "./image_gpt.ts";
export * from "./loader_config.ts";
export * from "./partitions.ts";
export * from "./pi_boot_config.ts";
export * from "./v8_flags.ts";
export * from "./version.ts";
