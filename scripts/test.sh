#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: formatting, lints, every crate's tests
# (workspace and each crate on its own, since feature unification can hide a missing
# feature), doc tests, and Pure's Python SDK and Ansible collection against the simulator.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export RUST_BACKTRACE=1

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test --workspace"
cargo test --workspace

for crate in flasharray-client flasharray-mock px-topology pxfa; do
  step "cargo test -p $crate (on its own)"
  cargo test -p "$crate"
done

step "Pure's Python SDK (py-pure-client) against the simulator"
bash tests/sdk_compat/run.sh

step "Pure's Ansible collection (purestorage.flasharray) against the simulator"
bash tests/ansible_compat/run.sh

step "all green"
