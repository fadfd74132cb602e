/**
 * Test support for the CRI: a fake containerd CRI server on a Unix socket, with ready
 * conditions and a sample listing, for tests and harnesses in other rooms.
 * @module
 */
export {
  type FakeCriServer,
  readyConditions,
  SAMPLE_LISTING,
  startFakeCriServer,
} from "./fake_cri_server.ts";
