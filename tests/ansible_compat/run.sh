#!/usr/bin/env bash
# Runs Pure's Ansible collection (purestorage.flasharray, bundled in the `ansible`
# package pinned in tests/ansible_compat/requirements.txt) against the simulator.
#
#   tests/ansible_compat/run.sh [pytest args...]
#
# Creates (or reuses) a venv in target/ansible-venv, builds the sim_serve example,
# starts one simulator on a free port with a random token (written to a 0600 file,
# never printed), runs the playbooks through pytest (test_ansible.py), and stops the
# simulator. Playbooks get the array from PUREFA_URL and the token from PUREFA_API,
# which the collection reads from the environment, so the token is never in argv.
# Needs python3 >= 3.11 and network access to PyPI the first time.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
venv="$root/target/ansible-venv"
req="$root/tests/ansible_compat/requirements.txt"

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
if ! cmp -s "$req" "$venv/.requirements.txt" 2>/dev/null; then
    "$venv/bin/pip" install -q -r "$req"
    cp "$req" "$venv/.requirements.txt"
fi

cargo build -q -p flasharray-mock --example sim_serve
bin="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples/sim_serve"

work="$(mktemp -d)"
sim_pid=""
cleanup() {
    if [[ -n "$sim_pid" ]] && kill -0 "$sim_pid" 2>/dev/null; then
        kill "$sim_pid"
        wait "$sim_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

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
PXFA_SIM_TARGET="${url#https://}" \
PXFA_SIM_TOKEN_FILE="$work/token" \
PXFA_SIM_BIN="$bin" \
PXFA_ANSIBLE_VENV="$venv" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/ansible_compat" "$@"
