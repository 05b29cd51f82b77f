#!/usr/bin/env bash
# Runs Pure's Python SDK (tests/sdk_compat/requirements.txt) against the simulator.
#
#   tests/sdk_compat/run.sh [pytest args...]
#
# Creates (or reuses) a venv in target/sdk-venv, builds the sim_serve example,
# starts one simulator on a free port with a random token (written to a 0600 file,
# never printed), runs pytest, and stops the simulator; then does the same with a
# simulator answering as an array of REST 2.36 and one of 2.26 (--rest-version). Needs python3 >= 3.9 and
# network access to PyPI the first time.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../sim_suite.sh"
sim_suite_start sdk-venv "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/requirements.txt"

# The simulator at its newest REST version (the one sim_suite_start started), then
# as arrays whose newest versions are older: each run's SDK picks its own client
# (FA_2_N) from the versions the simulator advertises, and tests of what came later
# skip (conftest.since). PXFA_SDK_REST_VERSIONS overrides the older versions.
echo "REST (newest)"
PXFA_SIM_TARGET="${url#https://}" \
PXFA_SIM_TOKEN_FILE="$work/token" \
PXFA_SIM_BIN="$bin" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/sdk_compat" "$@"

for version in ${PXFA_SDK_REST_VERSIONS:-2.36 2.26}; do
    sim_suite_run_at "$version" "$root/tests/sdk_compat" "$@"
done
