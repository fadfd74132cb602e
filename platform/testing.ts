/**
 * Test support shared by platform/'s rooms and the root tests elsewhere: rerunning a test
 * inside fresh Linux namespaces, and the guards that refuse to touch the host's.
 * @module
 */
export {
  assertNotHostNamespace,
  type InnerRun,
  insideTestNamespace,
  type NamespaceName,
  rerunInNamespace,
} from "./rerun_in_namespace.ts";
