import { Store } from "./store.ts";
import { type ConformanceCatalog, storeConformance } from "./store_conformance.ts";

storeConformance("in-memory Store", () => new Store<ConformanceCatalog>());
