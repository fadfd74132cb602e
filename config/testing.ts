/**
 * Test inputs shared by the config tests and the tests of the paths configs
 * flow through (the keeper, ApplyConfiguration): a canary private key and the
 * wrong shapes an operator might paste it in.
 *
 * @module
 */

/** The body of a canary key: it must never show in any error. */
export const CANARY = "MHcCAQEEICANARYcanaryCANARYkeyMATERIALdoNOTleak0123456789abcdefoAoGCCqGSM49";
/** A PEM private key (shape only) carrying {@link CANARY}. */
export const CANARY_PEM =
  `-----BEGIN EC PRIVATE KEY-----\n${CANARY}\n-----END EC PRIVATE KEY-----\n`;
const CERT = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";

const pemBlock = (indent: string) => "|\n" + CANARY_PEM.replace(/^/gm, indent).trimEnd() + "\n";

/** The canary in every wrong shape and place, as YAML under `machine:`. */
export const CANARY_SHAPES: Record<string, string> = {
  "ca as a string": `  ca: ${JSON.stringify(CANARY_PEM)}\n`,
  "ca as a block string": `  ca: ${pemBlock("    ")}`,
  "ca as a list": `  ca: [${JSON.stringify(CANARY_PEM)}]\n`,
  "key folded onto one line (no |)": `  ca:\n    crt: ${
    JSON.stringify(CERT)
  }\n    key: -----BEGIN EC PRIVATE KEY-----\n      ${CANARY}\n      -----END EC PRIVATE KEY-----\n`,
  "key as a list": `  ca:\n    crt: ${JSON.stringify(CERT)}\n    key: [${
    JSON.stringify(CANARY_PEM)
  }]\n`,
  "key nested": `  ca:\n    crt: ${JSON.stringify(CERT)}\n    key: {pem: ${
    JSON.stringify(CANARY_PEM)
  }}\n`,
  "key as a number-ish string": `  ca:\n    crt: ${JSON.stringify(CERT)}\n    key: ${
    JSON.stringify(CANARY)
  }\n`,
  "misspelt ca": `  caa: {key: ${JSON.stringify(CANARY_PEM)}}\n`,
  "misspelt key": `  ca:\n    crt: ${JSON.stringify(CERT)}\n    kye: ${
    JSON.stringify(CANARY_PEM)
  }\n`,
  "ca_key": `  ca_key: ${pemBlock("    ")}`,
  "under domainname": `  domainname: ${JSON.stringify(CANARY_PEM)}\n`,
  "as a service id": `  services: [{id: ${JSON.stringify(CANARY_PEM)}, command: [/bin/x]}]\n`,
  "as a sysctl": `  sysctls: {${JSON.stringify(CANARY_PEM)}: 1}\n`,
  "as a mapping key": `  ${JSON.stringify(CANARY_PEM)}: 1\n`,
  "in a service argv": `  services: [{id: a, command: [${JSON.stringify(CANARY_PEM)}]}]\n`,
  "block header run into the PEM": `  ca:\n    key: |${
    CANARY_PEM.replace(/^/gm, "      ").trimStart()
  }`,
  "as a document of its own": `---\n${CANARY_PEM}`,
  "bad indentation":
    `  ca:\n    key: -----BEGIN EC PRIVATE KEY-----\n${CANARY}\n  -----END EC PRIVATE KEY-----\n`,
};
