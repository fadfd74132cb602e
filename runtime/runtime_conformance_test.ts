import { ControllerRuntime } from "./runtime.ts";
import { runtimeConformance } from "./runtime_conformance.ts";

runtimeConformance("ControllerRuntime", (store, options) => new ControllerRuntime(store, options));
