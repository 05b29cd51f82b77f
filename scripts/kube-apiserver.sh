#!/usr/bin/env bash
# A real kube-apiserver with embedded etcd, on loopback only, for the tests of the
# Kubernetes tier (the Go module tools/kube-apiserver: Kubernetes and etcd from pinned Go
# modules, nothing else downloaded).
#
#   build        build target/kube-apiserver/pxfa-kube-apiserver; a no-op while the
#                module's go.mod, go.sum and sources (and the Go version) are unchanged
#   start DIR    start it with its state in DIR (certificates, keys, etcd's data); waits
#                until the CRDs are Established; the last line printed is the path of
#                the admin kubeconfig (a client certificate in system:masters)
#   stop DIR     stop it; etcd's data stays, so `start DIR` again resumes the cluster
#
# CRDs loaded: $PXFA_SCHEMAS_DIR (default ../shared/schemas) and its more/, pxfa's own
# (`pxfa crd`, from $PXFA_BIN or target/debug/pxfa, else cargo run), and the stand-in
# for KubeVirt's VirtualMachine/VirtualMachineInstance (tools/kube-apiserver/kubevirt-standin.yaml)
# and nmstate's NodeNetworkState (nmstate-standin.yaml).
# PXFA_APISERVER_WATCH_PID: the server stops by itself when that process ends (tests).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/tools/kube-apiserver"
out="${CARGO_TARGET_DIR:-$root/target}/kube-apiserver"
bin="$out/pxfa-kube-apiserver"
start_timeout=300
stop_timeout=60

die() { echo "kube-apiserver.sh: $*" >&2; exit 1; }

# The Kubernetes version the binary reports is the one go.mod pins.
k8s_version() { awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v1\./ { print $2; exit }' "$src/go.mod"; }

# shellcheck source=lib/go-tool.sh
source "$root/scripts/lib/go-tool.sh"

build() {
  local v minor
  v="$(k8s_version)"
  minor="${v#v1.}"; minor="${minor%%.*}"
  go_tool_build "this tier (Kubernetes $v)" "$src" "$bin" -ldflags \
    "-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
}

# running DIR: the pid in DIR/pid is alive and is this server (not a recycled pid).
running() {
  local pid
  pid="$(cat "$1/pid" 2>/dev/null)" || return 1
  [[ -n "$pid" ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF "pxfa-kube-apiserver -dir $1 "
}

start() {
  local dir="$1"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  running "$dir" && die "already running in $dir (pid $(cat "$dir/pid"))"
  build
  local schemas="${PXFA_SCHEMAS_DIR:-$root/../shared/schemas}"
  [[ -d "$schemas" ]] || die "$schemas not found (set PXFA_SCHEMAS_DIR)"
  mkdir -p "$dir/crds"
  pxfa crd > "$dir/crds/pxfa.yaml"
  local args=(-dir "$dir" -crds "$schemas" -crds "$dir/crds/pxfa.yaml"
    -crds "$src/kubevirt-standin.yaml" -crds "$src/nmstate-standin.yaml")
  [[ -d "$schemas/more" ]] && args+=(-crds "$schemas/more")
  [[ -n "${PXFA_APISERVER_WATCH_PID:-}" ]] && args+=(-watch-pid "$PXFA_APISERVER_WATCH_PID")
  setsid "$bin" "${args[@]}" >>"$dir/apiserver.log" 2>&1 </dev/null &
  echo $! > "$dir/pid"
  wait_ready "$dir"
  echo "$dir/admin.kubeconfig"
}

# wait_ready DIR: the process just started is alive (kill -0, not `running`: until
# the forked shell has exec'd the binary, which a loaded machine can delay, its
# cmdline is still the shell's) until DIR/ready appears.
wait_ready() {
  local dir="$1" deadline=$((SECONDS + start_timeout)) pid
  pid="$(cat "$dir/pid")"
  until [[ -f "$dir/ready" ]]; do
    if [[ -f "$dir/failed" ]] || ! kill -0 "$pid" 2>/dev/null || ((SECONDS > deadline)); then
      tail -n 30 "$dir/apiserver.log" >&2 || true
      [[ -f "$dir/failed" ]] && sed 's/^/kube-apiserver.sh: /' "$dir/failed" >&2
      stop "$dir"
      die "did not become ready in $dir (log: $dir/apiserver.log)"
    fi
    sleep 0.5
  done
}

stop() {
  local dir="$1"
  [[ -d "$dir" ]] || die "$dir not found"
  dir="$(cd "$dir" && pwd)"
  if running "$dir"; then
    local pid deadline=$((SECONDS + stop_timeout))
    pid="$(cat "$dir/pid")"
    kill -TERM "$pid"
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$dir/pid" "$dir/ready"
}

case "${1:-}" in
  build) build ;;
  start) [[ $# -eq 2 ]] || die "usage: $0 start DIR"; start "$2" ;;
  stop) [[ $# -eq 2 ]] || die "usage: $0 stop DIR"; stop "$2" ;;
  *) die "usage: $0 build | start DIR | stop DIR" ;;
esac
