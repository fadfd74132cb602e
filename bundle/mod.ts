/**
 * The upgrade bundle's format, shared by the imager (writes), machinectl and the node (reads): manifest, reader, writer, signing key, errors.
 * @module
 */
export * from "./bundle_cmdline.ts";
export * from "./bundle_format.ts";
export * from "./bundle_reader.ts";
export * from "./bundle_writer.ts";
export * from "./deadline.ts";
export * from "./errors.ts";
export * from "./manifest.ts";
export * from "./signing_key.ts";
