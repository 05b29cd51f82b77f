#!/usr/bin/env bash
# The controller's OLM bundle (deploy/olm), made from the same sources as deploy/ and
# checked by operator-framework's own validation (the Go module tools/olm-bundle,
# github.com/operator-framework/api from pinned Go modules, nothing else downloaded).
#
#   build          build target/olm-bundle/olm-bundle; a no-op while the module's
#                  go.mod, go.sum and sources (and the Go version) are unchanged
#   generate [DIR] write the bundle to DIR (default deploy/olm) from
#                  deploy/controller/controller.yaml, deploy/rbac/management.yaml,
#                  `pxfa crd` ($PXFA_BIN or target/debug/pxfa, else cargo run) and
#                  examples/tenant-kubevirt-csi.yaml, at pxfa's version
#   validate [DIR] run operator-framework's bundle validators on DIR (default deploy/olm)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/tools/olm-bundle"
out="${CARGO_TARGET_DIR:-$root/target}/olm-bundle"
bin="$out/olm-bundle"

die() { echo "olm-bundle.sh: $*" >&2; exit 1; }

# shellcheck source=lib/go-tool.sh
source "$root/scripts/lib/go-tool.sh"

build() { go_tool_build "the bundle's validation" "$src" "$bin"; }

pxfa_version() {
  awk -F'"' '/^version *=/ { print $2; exit }' "$root/Cargo.toml"
}

generate() {
  local dir="${1:-$root/deploy/olm}" tmp
  build
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  pxfa crd > "$tmp/crd.yaml"
  "$bin" generate -deploy "$root/deploy" -crd "$tmp/crd.yaml" \
    -example "$root/examples/tenant-kubevirt-csi.yaml" -version "$(pxfa_version)" -out "$dir"
  echo "$dir"
}

validate() {
  build
  "$bin" validate "${1:-$root/deploy/olm}"
}

case "${1:-}" in
  build) build ;;
  generate) [[ $# -le 2 ]] || die "usage: $0 generate [DIR]"; generate "${2:-}" ;;
  validate) [[ $# -le 2 ]] || die "usage: $0 validate [DIR]"; validate "${2:-}" ;;
  *) die "usage: $0 build | generate [DIR] | validate [DIR]" ;;
esac
