# Shared by tests/sdk_compat/run.sh and tests/ansible_compat/run.sh (sourced, not run):
# a venv with the suite's requirements, the sim_serve example, and one simulator on a
# free port with a random token (written to a 0600 file, never printed), stopped on exit.
#
#   sim_suite_start VENV_NAME REQUIREMENTS_FILE
#
# sets: root, venv, bin (the sim_serve binary), work (a temp dir), url (https://…),
# and the token file "$work/token".
#
#   sim_suite_run_at VERSION SUITE_DIR [pytest args...]
#
# runs the suite in SUITE_DIR once more against a second simulator that answers as an
# array whose newest REST version is VERSION (2.N), then stops it; the caller exports
# whatever else its suite reads from the environment.

# A venv that was moved or copied (a target/ restored from another checkout) keeps
# its python, but its scripts' #! lines name the old place and fail to start (pip's
# long-path form names it on line 2): remove it so that it is made again.
sim_suite_drop_moved_venv() {
    local venv="$1"
    if [[ -x "$venv/bin/python" ]] && ! head -n2 "$venv/bin/pip" 2>/dev/null | grep -qF "$venv/bin/"; then
        echo "note: $venv was made in another place; making it again" >&2
        rm -rf "$venv"
    fi
}

sim_suite_start() {
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    cd "$root"
    venv="$root/target/$1"
    local req="$2"

    sim_suite_drop_moved_venv "$venv"
    if [[ ! -x "$venv/bin/python" ]]; then
        python3 -m venv "$venv"
    fi
    if ! cmp -s "$req" "$venv/.requirements.txt" 2>/dev/null; then
        "$venv/bin/pip" install -q -r "$req"
        cp "$req" "$venv/.requirements.txt"
    fi

    # scripts/test.sh builds it before running the suites beside `cargo test`, whose
    # build lock a second cargo would wait for.
    [[ -n "${PXFA_PREBUILT:-}" ]] || cargo build -q -p flasharray-sim --example sim_serve
    bin="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples/sim_serve"

    work="$(mktemp -d)"
    sim_pid=""
    trap sim_suite_cleanup EXIT

    "$bin" --port 0 --token-file "$work/token" --url-file "$work/url" >/dev/null &
    sim_pid=$!
    for _ in $(seq 1 300); do
        [[ -s "$work/url" ]] && break
        kill -0 "$sim_pid" 2>/dev/null || { echo "simulator exited early" >&2; exit 1; }
        sleep 0.1
    done
    [[ -s "$work/url" ]] || { echo "simulator did not start" >&2; exit 1; }
    url="$(cat "$work/url")"
    echo "simulator: $url"
}

sim_suite_run_at() {
    local version="$1" suite="$2"
    shift 2
    local vwork="$work/rest-$version" vpid status=0
    mkdir -p "$vwork"
    "$bin" --port 0 --token-file "$vwork/token" --url-file "$vwork/url" \
        --rest-version "$version" >/dev/null &
    vpid=$!
    for _ in $(seq 1 300); do
        [[ -s "$vwork/url" ]] && break
        kill -0 "$vpid" 2>/dev/null || { echo "simulator at $version exited early" >&2; exit 1; }
        sleep 0.1
    done
    echo "REST $version"
    PXFA_SIM_TARGET="$(sed 's#^https://##' "$vwork/url")" \
    PXFA_SIM_TOKEN_FILE="$vwork/token" \
    PXFA_SIM_BIN="$bin" \
    PXFA_SIM_REST_VERSION="$version" \
        "$venv/bin/python" -m pytest -q -p no:cacheprovider "$suite" "$@" || status=$?
    kill "$vpid"
    wait "$vpid" 2>/dev/null || true
    [[ $status -eq 0 ]] || exit "$status"
}

sim_suite_cleanup() {
    if [[ -n "$sim_pid" ]] && kill -0 "$sim_pid" 2>/dev/null; then
        kill "$sim_pid"
        wait "$sim_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
