/**
 * The single place that prepares @peculiar/x509: `reflect-metadata` must be
 * loaded before the library (its ASN.1 schema uses decorators), and the library
 * must be told to use the runtime's WebCrypto. Every pki/ file imports `x509`
 * from here so the order can never be wrong.
 *
 * @module
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(crypto);

export { x509 };
