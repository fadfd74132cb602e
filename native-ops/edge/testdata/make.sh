#!/usr/bin/env bash
# Regenerates the verifier's test certificates (src/verifier_test.rs): a node
# CA, another CA with the same subject, and one client certificate per case.
set -euo pipefail
cd "$(dirname "$0")"
key() { openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$1.key"; }
ca() {
  key "$1"
  openssl req -new -x509 -key "$1.key" -subj "/O=machined/CN=machined CA" -days 36500 -out "$1.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
}
# leaf NAME ISSUER SUBJECT [EXTENSIONS...] (no extensions: a v1 certificate)
leaf() {
  local name=$1 issuer=$2 subject=$3; shift 3
  key "$name"
  openssl req -new -key "$name.key" -subj "$subject" -out "$name.csr"
  local ext=()
  if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$name.ext"; ext=(-extfile "$name.ext"); fi
  openssl x509 -req -in "$name.csr" -CA "$issuer.crt" -CAkey "$issuer.key" -CAcreateserial \
    -days 36500 "${ext[@]}" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}
ca ca
ca other-ca
ok=("extendedKeyUsage=clientAuth" "keyUsage=critical,digitalSignature")
leaf admin ca "/O=os:admin/CN=admin" "${ok[@]}"
leaf reader ca "/O=os:reader/O=os:operator/CN=bob smith" "${ok[@]}"
leaf foreign other-ca "/O=os:admin/CN=intruder" "${ok[@]}"
leaf server-only ca "/O=os:admin/CN=server" "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature"
leaf no-eku ca "/O=os:admin/CN=no-eku" "keyUsage=critical,digitalSignature"
leaf no-ds ca "/O=os:admin/CN=no-ds" "extendedKeyUsage=clientAuth" "keyUsage=critical,keyEncipherment"
leaf no-role ca "/O=somebody/CN=no-role" "${ok[@]}"
leaf v1 ca "/O=os:admin/CN=v1"
leaf ca-as-client ca "/O=os:admin/CN=sub-ca" "basicConstraints=critical,CA:TRUE" "extendedKeyUsage=clientAuth" "keyUsage=critical,digitalSignature,keyCertSign"
# The tests need only the certificates.
rm -f ./*.srl ./*.key
