/**
 * Node PKI and the `machinectl` client config: the node CA, the API server's
 * certificate (with renewal), role-carrying client certificates, the PKI
 * directory on the node, the secrets bundle, and the client config file.
 * All keys are ECDSA P-256; certificates are X.509 v3 (see docs/decisions.md).
 *
 * @example
 * ```ts
 * import { generateClientConfig, loadOrCreateNodePki, roleFromCertificate } from "./pki/mod.ts";
 *
 * const pki = await loadOrCreateNodePki("/system/state/pki", {
 *   hostnames: ["node-1"],
 *   addresses: ["10.0.0.5"],
 * });
 * const config = await generateClientConfig({
 *   secrets: { ca: pki.ca },
 *   role: "os:reader",
 *   name: "alice",
 *   endpoints: ["10.0.0.5"],
 * });
 * // in the API server, on a verified TLS socket:
 * // const role = roleFromCertificate(socket.getPeerCertificate());
 * ```
 * @module
 */
export { x509 } from "./x509_provider.ts";
export { isPkiError, PkiError, type PkiErrorKind } from "./pki_error.ts";
export { type CertificateAuthority, DAY_MS, type KeyedCertificate } from "./keyed_certificate.ts";
export {
  certificateFromPem,
  KEY_ALGORITHM,
  keyMatchesCertificate,
  privateKeyFromPem,
  SIGNING_ALGORITHM,
} from "./key_pem.ts";
export {
  CA_LIFETIME_MS,
  type CreateCaOptions,
  createCertificateAuthority,
  loadCertificateAuthority,
} from "./certificate_authority.ts";
export {
  issueLeafCertificate,
  LEAF_LIFETIME_MS,
  type LeafCertificateParams,
} from "./leaf_certificate.ts";
export {
  issueServerCertificate,
  type ServerCertificateParams,
  serverSubjectAltNames,
  subjectAltNamesOf,
} from "./server_certificate.ts";
export { type ClientCertificateParams, issueClientCertificate } from "./client_certificate.ts";
export { certificateNameProblem, MAX_CERTIFICATE_NAME_LENGTH } from "./certificate_name.ts";
export {
  type CertificateInput,
  isRole,
  type Role,
  roleFromCertificate,
  roleFromOrganizations,
  ROLES,
} from "./role.ts";
export {
  ClientCertificateError,
  type ClientCertificateProblem,
  type ClientIdentity,
  verifyClientCertificate,
} from "./verify_client_certificate.ts";
export {
  DEFAULT_RENEW_BEFORE_MS,
  needsRenewal,
  type RenewalPolicy,
  renewalTime,
  type Validity,
} from "./renewal.ts";
export {
  createServerCertRenewer,
  type RenewerClock,
  renewServerCertificate,
  type RenewServerCertificateParams,
  type ServerCertRenewer,
  type ServerCertRenewerOptions,
  type ServerNames,
  systemClock,
} from "./server_cert_renewer.ts";
export { type AtomicWriteOptions, pathExists, writeFileAtomic } from "./atomic_write.ts";
export {
  loadOrCreateNodePki,
  type NodePki,
  type NodePkiOptions,
  PKI_FILES,
  serverCertificateFits,
  writeServerCertificate,
} from "./node_pki.ts";
export {
  loadSecretsBundle,
  parseSecretsBundle,
  type SecretsBundle,
  stringifySecretsBundle,
  writeSecretsBundle,
} from "./secrets_bundle.ts";
export {
  addContext,
  type ClientConfig,
  type ClientContext,
  type ClientCredentials,
  contextFromPem,
  emptyClientConfig,
  listContexts,
  mergeClientConfig,
  parseClientConfig,
  readClientConfig,
  resolveClientConfigPath,
  resolveCredentials,
  stringifyClientConfig,
  useContext,
  writeClientConfig,
} from "./client_config.ts";
export {
  DEFAULT_API_PORT,
  generateClientConfig,
  type GenerateClientConfigParams,
  withDefaultPort,
} from "./generate_client_config.ts";
export {
  BUNDLE_FILES,
  generateNodeBundle,
  type GenerateNodeBundleParams,
  type MachineConfigInput,
  type NodeBundle,
} from "./node_bundle.ts";
export {
  certificateFingerprint,
  createSelfSignedServerCertificate,
  parseFingerprint,
  type SelfSignedParams,
} from "./self_signed.ts";
export { generateKeyPair, privateKeyToPem } from "./key_pem.ts";
export {
  generateSecureBootKeys,
  loadSecureBootKeys,
  SECURE_BOOT_KEY_NAMES,
  type SecureBootKey,
  secureBootKeyFiles,
  type SecureBootKeyName,
  type SecureBootKeys,
} from "./secure_boot_keys.ts";
export {
  createTrustedFetch,
  fetchErrorText,
  MAX_TRUST_BUNDLE_BYTES,
  TrustBundleError,
  type TrustedFetchOptions,
} from "./trusted_fetch.ts";
