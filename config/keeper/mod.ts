/**
 * The machine config keeper: sources, loading, keeping the text in force, ApplyConfiguration's modes, late config, logging config.
 * @module
 */
export * from "./config_keeper.ts";
export * from "./config_loader.ts";
export * from "./config_fetch.ts";
export * from "./config_modes.ts";
export * from "./late_config.ts";
export * from "./late_config_boot.ts";
export * from "./logging_config.ts";
