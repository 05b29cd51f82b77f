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

. "$(dirname "${BASH_SOURCE[0]}")/../sim_suite.sh"
sim_suite_start ansible-venv "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/requirements.txt"

PXFA_SIM_TARGET="${url#https://}" \
PXFA_SIM_TOKEN_FILE="$work/token" \
PXFA_SIM_BIN="$bin" \
PXFA_ANSIBLE_VENV="$venv" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/ansible_compat" "$@"
