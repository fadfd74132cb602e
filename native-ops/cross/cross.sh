#!/usr/bin/env bash
# Cross-compiles native-ops (the napi-rs addon) and native-ops/init
# (machined-init) for aarch64-unknown-linux-gnu without rustup: rustup's
# targets come from static.rust-lang.org, which is not always reachable, and
# Debian's own arm64 Rust std (libstd-rust-web-dev:arm64) must match Debian's
# compiler exactly. So a private Debian bookworm chroot (amd64, native speed)
# holds rustc-web/cargo-web 1.96, libstd-rust-web-dev:arm64 and
# gcc-aarch64-linux-gnu, with arm64 added to the CHROOT's dpkg only: the
# host's apt and dpkg are never changed. Needs root (debootstrap, chroot,
# unshare -m) and the host package debootstrap.
#
#   native-ops/cross/cross.sh setup                 create the chroot (idempotent)
#   native-ops/cross/cross.sh build CRATE_DIR       cargo build --release --target aarch64-...
#
# CRATE_DIR is native-ops, native-ops/init or native-ops/edge (machined-edge,
# whose ring crate compiles C with the same cross gcc); the output lands in
# native-ops/target/cross/aarch64-unknown-linux-gnu/release/. The chroot lives
# in $MACHINED_CROSS_ROOT (default: .cache/cross/bookworm in the checkout,
# gitignored).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
cd "$(dirname "$0")/../.."
REPO=$(pwd)
ROOT=${MACHINED_CROSS_ROOT:-$REPO/.cache/cross/bookworm}
MIRROR=${MACHINED_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${MACHINED_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
TARGET=aarch64-unknown-linux-gnu
PACKAGES="rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross ca-certificates"

setup() {
  if [ -f "$ROOT/.machined-cross-complete" ]; then return 0; fi
  mkdir -p "$(dirname "$ROOT")"
  if ! [ -x "$ROOT/usr/bin/apt-get" ]; then
    echo "cross: debootstrap bookworm into $ROOT" >&2
    debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 ||
      { tail -20 "$ROOT.debootstrap.log" >&2; exit 1; }
  fi
  cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
EOF
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  # A host behind a TLS-inspecting proxy trusts extra CAs; cargo in the chroot needs them too.
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  fi
  chroot "$ROOT" dpkg --add-architecture arm64
  chroot "$ROOT" apt-get update -qq
  # shellcheck disable=SC2086
  chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    $PACKAGES >"$ROOT.apt.log" 2>&1 || { tail -20 "$ROOT.apt.log" >&2; exit 1; }
  chroot "$ROOT" update-ca-certificates >/dev/null 2>&1 || true
  chroot "$ROOT" rustc --version >"$ROOT/.machined-cross-complete"
  echo "cross: ready ($(cat "$ROOT/.machined-cross-complete"))" >&2
}

build() {
  local crate
  crate=$(realpath "$1")
  case "$crate" in
    "$REPO/native-ops" | "$REPO/native-ops/init" | "$REPO/native-ops/edge") ;;
    *) echo "cross: $1 is not native-ops, native-ops/init or native-ops/edge" >&2; exit 2 ;;
  esac
  setup
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  mkdir -p "$ROOT/src" "$ROOT/proc" "$ROOT/dev"
  local manifest=/src${crate#"$REPO/native-ops"}/Cargo.toml
  # A private mount namespace: the bind mounts vanish with the command.
  unshare -m sh -ec "
    mount --bind '$REPO/native-ops' '$ROOT/src'
    mount -t proc proc '$ROOT/proc'
    mount --bind /dev '$ROOT/dev'
    chroot '$ROOT' env HOME=/root PATH=/usr/bin:/bin \
      CARGO_TARGET_DIR=/src/target/cross \
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
      CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
      cargo build --release --locked --target $TARGET --manifest-path '$manifest'
  "
}

case "${1:-}" in
  setup) setup ;;
  build) build "${2:?usage: cross.sh build CRATE_DIR}" ;;
  *) echo "usage: $0 setup | build CRATE_DIR" >&2; exit 2 ;;
esac
