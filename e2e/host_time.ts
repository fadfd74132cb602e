/**
 * The host's clock for QEMU guests: an SNTP responder on 127.0.0.1:123,
 * which QEMU's user network serves to its guest as 10.0.2.2:123. CI runs two
 * QEMU cases at once (.ci/e2e_lanes.sh), and two of them need this port (the
 * full node and the Pi); each binds it shared, so both hold it and whichever
 * answers a guest, it answers with the same clock. A case must therefore not
 * count its own responder's requests: another case's may have answered them.
 * @module
 */
import { type SntpResponder, startSntpResponder } from "../controllers/time/mod.ts";

/** Serve the host's clock on 127.0.0.1:123 (root), shared with other cases. */
export function serveHostTime(): Promise<SntpResponder> {
  return startSntpResponder({ hostname: "127.0.0.1", port: 123, shared: true }).catch((e) => {
    throw new Error(`cannot serve SNTP on 127.0.0.1:123: ${e}`);
  });
}
