#!/usr/bin/env bash
# Renders `pxfa plan -o dot` and `pxfa status -o dot` of every example tenant against
# the embedded simulated array with Graphviz, and fails if `dot` rejects any of them.
# Installs Graphviz from Debian's packages when `dot` is missing (root in CI).
# Usage: scripts/check-graphs.sh [path/to/pxfa]   (default: builds target/debug/pxfa)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v dot >/dev/null 2>&1; then
    echo "check-graphs: installing graphviz"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
fi

pxfa="${1:-}"
if [ -z "$pxfa" ]; then
    cargo build -q -p pxfa
    pxfa=target/debug/pxfa
fi

# Exit 3 is `status` finding problems (nothing applied yet, drives pending): the graph
# is printed all the same. Anything else but 0 fails.
graph() {
    local rc=0
    "$@" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "check-graphs: exit $rc from: $*" >&2; exit 1; }
}

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
n=0
for spec in examples/tenant-*.yaml; do
    name="$(basename "$spec" .yaml)"
    state="$out/$name.sim.json"
    for cmd in plan status; do
        graph "$pxfa" --array sim --sim-state "$state" -q "$cmd" -f "$spec" -o dot >"$out/$name.$cmd.dot"
        grep -q '^digraph pxfa {' "$out/$name.$cmd.dot"
        dot -Tsvg "$out/$name.$cmd.dot" -o "$out/$name.$cmd.svg"
        grep -q '<svg' "$out/$name.$cmd.svg"
        n=$((n + 1))
    done
    # After an apply the status graph colours objects as present.
    "$pxfa" --array sim --sim-state "$state" -q apply -f "$spec" --yes --out "$out/$name-out" --include-secrets >/dev/null
    graph "$pxfa" --array sim --sim-state "$state" -q status -f "$spec" -o dot >"$out/$name.applied.dot"
    dot -Tsvg "$out/$name.applied.dot" -o "$out/$name.applied.svg"
    n=$((n + 1))
done
echo "check-graphs: dot accepted $n graphs"
