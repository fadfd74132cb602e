/**
 * The native kernel log reader against the real /dev/kmsg. Needs root (reading
 * and writing /dev/kmsg needs CAP_SYSLOG / root); writes two marker lines.
 */
import { kmsgBackendConformance } from "./backend_conformance.ts";
import { NativeKmsgBackend } from "./backend_native.ts";

const isRoot = Deno.uid() === 0;
const hasKmsg = await Deno.stat("/dev/kmsg").then(() => true, () => false);
if (!isRoot) console.log("skipping native kmsg tests: /dev/kmsg needs root");
else if (!hasKmsg) console.log("skipping native kmsg tests: no /dev/kmsg");

kmsgBackendConformance(
  "NativeKmsgBackend (needs root, /dev/kmsg)",
  () =>
    Promise.resolve({
      backend: new NativeKmsgBackend(),
      // Writing to /dev/kmsg appends a record at the default level.
      log: (text) => Deno.writeTextFile("/dev/kmsg", `machined-test: ${text}\n`),
    }),
  { ignore: !isRoot || !hasKmsg },
);
