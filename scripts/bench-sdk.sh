#!/usr/bin/env bash
# pxfa apply side by side with Pure's Python SDK (py-pure-client), each against a
# fresh HTTPS simulator: bench/sdk/side_by_side.py (see its docstring).
#
#   scripts/bench-sdk.sh                 # release build, 20 ms, 3/16/64 workers
#   scripts/bench-sdk.sh --workers 3,16 --latency-ms 5
#   scripts/bench-sdk.sh --smoke         # debug build, 1 ms, 3 workers, end states only
#
# Reuses the SDK venv of tests/sdk_compat (target/sdk-venv, created with
# tests/sdk_compat/requirements.txt if missing). Exits non-zero when an end state
# differs from pxfa's or a target of issue #16 is missed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

profile=release
extra=()
for arg in "$@"; do
    if [[ "$arg" == "--smoke" ]]; then
        profile=debug
        extra+=(--smoke --workers 3 --latency-ms 1)
    fi
done

venv="$root/target/sdk-venv"
req="$root/tests/sdk_compat/requirements.txt"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
if ! cmp -s "$req" "$venv/.requirements.txt" 2>/dev/null; then
    "$venv/bin/pip" install -q -r "$req"
    cp "$req" "$venv/.requirements.txt"
fi

flags=()
[[ "$profile" == release ]] && flags+=(--release)
# PXFA_PREBUILT: scripts/test.sh built the debug binaries already (see there).
if [[ -z "${PXFA_PREBUILT:-}" || "$profile" == release ]]; then
    cargo build -q "${flags[@]}" -p pxfa --bin pxfa
    cargo build -q "${flags[@]}" -p flasharray-sim --example sim_serve
fi
target="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

exec "$venv/bin/python" "$root/bench/sdk/side_by_side.py" \
    --pxfa "$target/$profile/pxfa" \
    --sim "$target/$profile/examples/sim_serve" \
    --spec "$root/examples/tenant-direct-access.yaml" \
    "${extra[@]}" "$@"
