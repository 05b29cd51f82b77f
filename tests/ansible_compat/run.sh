#!/usr/bin/env bash
# Runs Pure's Ansible collection (purestorage.flasharray, bundled in the `ansible`
# package pinned in tests/ansible_compat/requirements.txt) against the simulator.
#
#   tests/ansible_compat/run.sh [pytest args...]
#
# Creates (or reuses) a venv in target/ansible14-venv (ansible 14 needs Python
# >= 3.12: python3.13 or python3.12 on PATH, else pyenv's newest 3.12+; the rest of
# the project keeps the machine's python3), builds the sim_serve example,
# starts one simulator on a free port with a random token (written to a 0600 file,
# never printed), runs the playbooks through pytest (test_ansible.py), and stops the
# simulator. Playbooks get the array from PUREFA_URL and the token from PUREFA_API,
# which the collection reads from the environment, so the token is never in argv.
# Needs network access to PyPI the first time.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv_name=ansible14-venv

# A Python >= 3.12 for the venv; sim_suite_start reuses a venv that exists.
python_312() {
    local candidate
    for candidate in python3.13 python3.12 python3 \
        "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
. "$here/../sim_suite.sh"
venv_dir="$(cd "$here/../.." && pwd)/target/$venv_name"
sim_suite_drop_moved_venv "$venv_dir"
if [[ ! -x "$venv_dir/bin/python" ]]; then
    py="$(python_312)" || { echo "ansible 14 needs Python >= 3.12; none found" >&2; exit 1; }
    "$py" -m venv "$venv_dir"
fi
sim_suite_start "$venv_name" "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/requirements.txt"

# The simulator at its newest REST version (the one sim_suite_start started), then
# as an array whose newest version is older (PXFA_ANSIBLE_REST_VERSIONS, default
# 2.38): the collection and its SDK pick their clients from what it advertises.
# Collection 1.43 cannot manage hosts below 2.38 on any array: purefa_host passes
# `allow_errors` to get_hosts, a parameter the SDK's clients have only from 2.38
# (docs/simulator.md).
echo "REST (newest)"
PXFA_SIM_TARGET="${url#https://}" \
PXFA_SIM_TOKEN_FILE="$work/token" \
PXFA_SIM_BIN="$bin" \
PXFA_ANSIBLE_VENV="$venv" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/ansible_compat" "$@"

export PXFA_ANSIBLE_VENV="$venv"
for version in ${PXFA_ANSIBLE_REST_VERSIONS-2.38}; do
    sim_suite_run_at "$version" "$root/tests/ansible_compat" "$@"
done
