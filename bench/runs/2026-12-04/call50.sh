#!/usr/bin/env bash
# Call 50 (2026-12-04, eleventh session): issue 12's per-kind synthesis on
# the H200's 16 cores (the e2e tests with CUZK_SYNTH_BENCH=3 on the CPU
# backend), then the same four kinds proved by the CUDA backend and judged
# by filecoin-proofs' verifiers (CUZK_FIL_TEST_BACKEND=cuda).
# The e2e binary: `cargo test --release -p cuzk-filecoin --features
# cuzk-gpu/cuda --test e2e --no-run` (CUZK_CUDA_ARCHS=90), stripped into
# .gpu-e2e/e2e and carried as .carry/e2e.tgz.
set -u
out=${OUT:-/tmp}
tar xzf .carry/e2e.tgz
export CUZK_FIL_TEST_DIR=/tmp/e2e CUZK_FIL_TEST_PARAMS=/tmp/e2e-params
mkdir -p /tmp/e2e /tmp/e2e-params
{ nproc; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > "$out/machine.txt" 2>&1
CUZK_SYNTH_BENCH=3 ./.gpu-e2e/e2e --nocapture --test-threads 1 > "$out/e2e-cpu-bench.log" 2>&1
echo "rc=$?" >> "$out/e2e-cpu-bench.log"
CUZK_FIL_TEST_BACKEND=cuda ./.gpu-e2e/e2e --nocapture --test-threads 1 > "$out/e2e-cuda.log" 2>&1
echo "rc=$?" >> "$out/e2e-cuda.log"
grep -hE "synthesis bench|e2e backend|^test |test result|rc=|panicked" "$out"/e2e-*.log
