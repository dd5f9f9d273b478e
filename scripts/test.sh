#!/usr/bin/env bash
# The project's test command (README, "Run the tests"): installs the pinned
# nvcc from PyPI if it is not there yet (scripts/install-nvcc.sh, idempotent)
# and Debian's Chromium for the status page's browser test
# (scripts/install-chromium.sh, idempotent), then runs every crate's tests
# with the CUDA kernels and the GPU prover compiled, and ends with one line,
# `N passed, M failed`
# (scripts/test-summary.sh). GPU tests themselves run on a machine with a
# GPU through scripts/gpu-test.sh; here they are compiled, not run.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc_bin="$(bash scripts/install-nvcc.sh | tail -n 1)"
export PATH="$nvcc_bin:$PATH"
# Without Chromium the other tests still run; the status page's test fails
# saying what is missing.
if chromium="$(bash scripts/install-chromium.sh | tail -n 1)"; then
    export CUZK_CHROMIUM="$chromium"
else
    echo "test.sh: no Chromium (scripts/install-chromium.sh failed); the status page test will fail" >&2
fi
# Every test binary runs (--no-fail-fast) so that the summary counts them
# all; the script still fails when any test does.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
cargo test --no-fail-fast --workspace --features cuzk-cli/cuda,cuzk-cuda/cuda,cuzk-gpu/cuda "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
bash scripts/test-summary.sh "$log" "$status"
exit "$status"
