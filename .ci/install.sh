#!/usr/bin/env bash
# Installs what a fresh machine lacks: Deno 2.9.3 from npm (pinned: 2.9.4-2.9.6
# abort in their HTTP/2 server, denoland/deno#36788), Debian packages, Rust
# components and grpcurl. Idempotent; safe to run on a developer machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DENO_VERSION=2.9.3
mkdir -p .ci/bin

deno_version_of() { "$1" --version 2>/dev/null | head -1 | awk '{print $2}'; }
if ! [ -x .ci/bin/deno ] || [ "$(deno_version_of .ci/bin/deno)" != "$DENO_VERSION" ]; then
  mkdir -p "$ROOT/.ci/deno-$DENO_VERSION"
  existing=$(command -v deno || true)
  if [ -n "$existing" ] && [ "$(deno_version_of "$existing")" = "$DENO_VERSION" ]; then
    echo "using the deno $DENO_VERSION already on PATH ($existing)"
    cp "$(readlink -f "$existing")" "$ROOT/.ci/deno-$DENO_VERSION/deno"
  else
    echo "installing deno@$DENO_VERSION from npm"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm init -y >/dev/null &&
      npm install --prefer-offline --no-audit --no-fund "deno@$DENO_VERSION" >/dev/null)
    cp "$(find "$tmp/node_modules/@deno" -type f -name deno | head -1)" "$ROOT/.ci/deno-$DENO_VERSION/deno"
    rm -rf "$tmp"
  fi
  ln -sf "$ROOT/.ci/deno-$DENO_VERSION/deno" .ci/bin/deno
fi

# Debian packages: the list is the union of every *DEBIAN_PACKAGES file in the tree.
pkgs=$(cat $(find . -name DEBIAN_PACKAGES -not -path './build/*' 2>/dev/null) .ci/DEBIAN_PACKAGES 2>/dev/null |
  sed 's/#.*//' | tr -s ' \n' '\n' | sort -u | grep -v '^$' || true)
missing=()
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# The imager downloads the pinned kernel package with apt-get: the lists must exist.
if [ ${#missing[@]} -gt 0 ] || ! ls /var/lib/apt/lists/*Packages* >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if command -v rustup >/dev/null; then
  rustup component list --installed 2>/dev/null | grep -q clippy || rustup component add clippy rustfmt
fi

# The Rust cross toolchain for arm64 images (native-ops/cross/cross.sh: a private Debian chroot,
# about 3.5 min and 2.1 GB once). CI creates it here; elsewhere the first arm64 build does.
if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ] && [ -x /usr/sbin/debootstrap ]; then
  bash native-ops/cross/cross.sh setup
fi

if ! command -v grpcurl >/dev/null && ! [ -x "$HOME/go/bin/grpcurl" ]; then
  if command -v go >/dev/null || [ -x /usr/local/go/bin/go ]; then
    echo "installing grpcurl"
    GOFLAGS=-mod=mod "$(command -v go || echo /usr/local/go/bin/go)" install \
      github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3
  else
    # Not fatal: api/edge/cli_tools_test.ts then ignores its grpcurl test and says so
    # (and .ci/run with CI=true fails on that skip).
    echo "not installing grpcurl: no Go toolchain (go install needs one)"
  fi
fi

# wireguard-go for controllers/wireguard/wireguard_root_test.ts: the build host's kernel has no
# wireguard module, so the test's two namespaces get userspace devices that `wg` configures over
# their UAPI socket. Pinned to the newest version the Go proxy served on 2026-12-06 (the module
# has no semver tags). Not fatal: without it the test is ignored and says why.
WIREGUARD_GO_VERSION=v0.0.0-20260522210424-ecfc5a8d5446
if ! [ -x "$HOME/go/bin/wireguard" ]; then
  if command -v go >/dev/null || [ -x /usr/local/go/bin/go ]; then
    echo "installing wireguard-go $WIREGUARD_GO_VERSION"
    "$(command -v go || echo /usr/local/go/bin/go)" install \
      "golang.zx2c4.com/wireguard@$WIREGUARD_GO_VERSION" ||
      echo "not installing wireguard-go: go install failed (its root test is then ignored)"
  else
    echo "not installing wireguard-go: no Go toolchain (its root test is then ignored)"
  fi
fi

# The Ansible collection's tests (ansible/): ansible-core pinned, in a venv under .ci/ (gitignored),
# where ansible/testing.ts looks for ansible-playbook and ansible-galaxy. 2.18 runs on Python
# 3.11-3.13 on the controller. Not fatal: without it those tests are ignored and say why.
ANSIBLE_CORE_VERSION=2.18.19
venv="$ROOT/.ci/ansible-venv"
if ! "$venv/bin/ansible-playbook" --version 2>/dev/null | head -1 | grep -q "core $ANSIBLE_CORE_VERSION\]"; then
  if python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    echo "installing ansible-core $ANSIBLE_CORE_VERSION in $venv"
    python3 -m venv "$venv" &&
      "$venv/bin/pip" install -q --disable-pip-version-check "ansible-core==$ANSIBLE_CORE_VERSION" ||
      echo "not installing ansible-core: pip failed (the collection's tests are then ignored)"
  else
    echo "not installing ansible-core: python3 >= 3.11 is needed (the collection's tests are then ignored)"
  fi
fi
