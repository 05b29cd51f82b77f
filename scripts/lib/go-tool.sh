# Shared by the scripts that build one of the repository's Go tools (tools/*): the
# build-once-while-unchanged rule and how they run pxfa. Sourced, not run; the caller
# sets `root` (the repository) and a `die` function first.

# The stamp of a Go tool's sources: its go.mod, go.sum, Go files and the Go version.
# A binary whose .stamp file holds it is up to date.
go_tool_stamp() {
  (cd "$1" && cat go.mod go.sum ./*.go && go version) | sha256sum | cut -d' ' -f1
}

# go_tool_build WHAT SRC BIN [go build flags...]: build BIN from the module SRC, a
# no-op while its stamp is unchanged; GOFLAGS=-mod=readonly, so nothing but the
# pinned modules is used.
go_tool_build() {
  local what="$1" src="$2" bin="$3"
  shift 3
  command -v go >/dev/null || die "go is not installed ($what needs Go >= 1.24)"
  mkdir -p "$(dirname "$bin")"
  local want
  want="$(go_tool_stamp "$src")"
  if [[ -x "$bin" && "$(cat "$bin.stamp" 2>/dev/null)" == "$want" ]]; then
    echo "$(basename "$0"): $bin is up to date" >&2
    return
  fi
  echo "$(basename "$0"): building $bin" >&2
  (cd "$src" && GOFLAGS=-mod=readonly go build -trimpath -o "$bin.tmp" "$@" .)
  mv "$bin.tmp" "$bin"
  echo "$want" > "$bin.stamp"
}

# pxfa ARGS...: $PXFA_BIN, else the workspace's debug build, else cargo run.
pxfa() {
  if [[ -n "${PXFA_BIN:-}" ]]; then
    "$PXFA_BIN" "$@"
  elif [[ -x "$root/target/debug/pxfa" ]]; then
    "$root/target/debug/pxfa" "$@"
  else
    (cd "$root" && cargo run -q -p pxfa -- "$@")
  fi
}
