/**
 * Each room's floor: a room may import rooms on its own floor or below, never above. The
 * table is the architecture's promise in one place; `deno task structure` checks the
 * imports against it and tools/structure/structure_test.ts fails when an arrow climbs.
 */
export const FLOORS: Record<string, number> = {
  // 0: foundations with no domain knowledge.
  "runtime": 0,
  "logs": 0,
  "events": 0,
  "pki": 0,
  // Addresses: the one strict IP and CIDR parser.
  "ip": 0,
  "native-ops": 0,
  "native-ops/cross": 0,
  // 1: formats and the host's primitives.
  "config": 1,
  // platform/ is a house: one room per privileged surface, and its top (fault injection,
  // the test namespaces) shared by them.
  "platform": 1,
  "platform/block": 1,
  "platform/cgroup": 1,
  "platform/clock": 1,
  "platform/crypt": 1,
  "platform/esp": 1,
  "platform/firewall": 1,
  "platform/wireguard": 1,
  "platform/firmware": 1,
  "platform/identity": 1,
  "platform/kmod": 1,
  "platform/kmsg": 1,
  "platform/memory": 1,
  "platform/mount": 1,
  "platform/network": 1,
  "platform/power": 1,
  "platform/process": 1,
  "platform/procfs": 1,
  "platform/uevent": 1,
  "platform/unix_stream": 1,
  "platform/watchdog": 1,
  "cri": 1,
  "bundle": 1,
  // The Authenticode verifier: PE/COFF and PKCS#7 parsing, no upgrade knowledge.
  "bundle/authenticode": 1,
  // 2: resource types and what observes the host.
  "resources": 2,
  "observe": 2,
  "metrics": 2,
  "supervisor": 2,
  // 3: the machined core every domain is handed, controllers and the API's pure parts.
  "core": 3,
  "controllers/block": 3,
  "controllers/extensions": 3,
  "controllers/firewall": 3,
  "controllers/wireguard": 3,
  "controllers/firmware": 3,
  "controllers/kernel": 3,
  "controllers/network": 3,
  "controllers/services": 3,
  "controllers/time": 3,
  "controllers/trust": 3,
  "api/auth": 3,
  "api/client": 3,
  "api/mapping": 3,
  "api/errors": 3,
  // The image's contract with the node: disk plan, boot entries, command line, V8 flags.
  "layout": 3,
  // 4: the node's domains and the API's two processes.
  "api/server": 4,
  "api/edge": 4,
  "upgrade": 4,
  "install": 4,
  "reset": 4,
  "watchdog": 4,
  "config/keeper": 4,
  // 5: the API host (both ends plus PKI) and the API's public surface and fixtures.
  "api/host": 5,
  "api": 5,
  // 6: the composition root.
  "node": 6,
  // 7: PID 1's boot sequence, which starts the node.
  "boot": 7,
  // 8: programs: the dev loop, the image builder, the CLI.
  "dev": 8,
  "imager": 8,
  "machinectl": 8,
  // 9: entry points and harnesses.
  "main": 8,
  "bench": 9,
  "e2e": 9,
  "tools": 9,
};
