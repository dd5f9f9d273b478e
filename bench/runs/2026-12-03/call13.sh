#!/usr/bin/env bash
# 2026-12-03 (third session), call 13: main after the merges (k14 with G2
# lane pairs only, plk, mapped parameters, the backend split), binaries
# .gpu (gpu-test.sh --prepare) and .gpu-prover built at 9c6adb3 (the plk merge; CUZK_CUDA_ARCHS=90):
#   1. every kernel check (gpu_tests)
#   2. every GPU prover check (gpu_prover_test), the mapped-file ones too
#   3. the MSM rows at the new defaults (G1 2^18/2^22/2^24, G2 2^22)
set -u
out="${OUT:-/tmp}"
t0=$(date +%s); left() { echo $((420 - $(date +%s) + t0)); }
echo "== kernel checks $(date +%T)"
mkdir -p "$out/tests"
OUT="$out/tests" timeout 240 bash .gpu/gpu-test.sh > "$out/tests/run.log" 2>&1
echo "rc $?"; grep -E "^(FAIL|PANIC)|passed, " "$out/tests/run.log" | tail -8
echo "== prover checks $(date +%T) ($(left) s left)"
mkdir -p "$out/prover"
OUT="$out/prover" timeout 120 bash .gpu-prover/gpu-prover-test.sh > "$out/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$out/prover/run.log" | tail -6
echo "== msm bench --shrink 2 $(date +%T) ($(left) s left)"
timeout 60 ./.gpu/bench_kernels --filter msm --reps 3 --shrink 2 --json-out "$out/bench-msm-s2.json" > "$out/bench-msm-s2.log" 2>&1
echo "rc $?"; grep -E "^msm" "$out/bench-msm-s2.log" | head -30 | cut -c1-72
echo "== done $(date +%T)"
