#!/usr/bin/env bash
# The project's test command (README, "Run the tests"): every crate's tests,
# with the CUDA kernels compiled (nvcc must be on PATH; scripts/install-nvcc.sh
# puts it in .cuda/bin). GPU tests themselves run on a GPU machine through
# scripts/gpu-test.sh; here they are compiled, not run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .cuda/bin/nvcc ]; then export PATH="$PWD/.cuda/bin:$PATH"; fi
exec cargo test --workspace --features cuzk-cuda/cuda "$@"
