#!/usr/bin/env bash
# Call 106 (planned 2026-12-08, thirty-fifth session; no device time
# was left for it): run 63's winner adopted as the sort's default (16
# entries a thread staged in 96 KiB a block, MsmSortTuning::DEFAULT
# 512:10:96:16, the kernels opted in at device open). Carry
# [".carry/c106.tgz"]: .gpu (gpu_tests, bench_kernels at main) and
# .gpu-old (bench_kernels with the kernels' old 8 a thread; its
# 512:10:48:8 row is the old default exactly). Build here (PATH with
# .cuda's nvcc), the old one last (it recompiles the kernels in target/):
#   CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare
#   CUZK_CUDA_ARCHS=90 CUZK_NVCC_DEFINES=MSM_SORT_STAGE_PER_THREAD=8 bash scripts/gpu-prepare.sh \
#     .gpu-old scripts/gpu-test.sh bench_kernels -- -p cuzk-cuda --features cuda --example bench_kernels
#   CUZK_CUDA_ARCHS=90 bash scripts/gpu-prover-test.sh --prepare   (first: .gpu-prover at main)
#   tar czf .carry/c106.tgz .gpu .gpu-old .gpu-prover
# (1) every MSM check (G1, G2, 0/1 splits, windows, groups) under the new
#     default; (2) G1 rows 2^20-2^26, new default and the old geometry in
#     the new build; (3) the old build's default rows, same sizes; (4) the
#     GPU prover's checks (conformance, bellperson, staging, faults) with
#     the new default, where 100 s are left (budget 350 for all four).
# Predicted from call 105 (H100): 2^26 -2.3%, 2^24 -1.9%; 2^20-2^23 not
# measured with 16 a thread (the place pass at 77 registers holds one
# block of 512 an SM): between -2% and +2%.
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-250}" "${OUT:-/tmp}/c106"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
tar -xzf .carry/c106.tgz
export CUZK_BENCH_POINTS_DIR=/tmp/cuzk-points
mkdir -p "$CUZK_BENCH_POINTS_DIR"
stamp "MSM checks under the new default sort"
timeout "$(lim 80)" ./.gpu/gpu_tests --filter msm/ > "$w/check-msm.log" 2>&1
echo "rc $?"; grep -E "passed|FAIL" "$w/check-msm.log" | tail -5
stamp "G1 sort rows, new build: default and 512:10:48:8 (reps 2)"
CUZK_MSM_BENCH_LOGS=20,22,23,24,26 CUZK_MSM_BENCH_SORT_TUNINGS="512:10:48:8" \
  timeout "$(lim 90)" ./.gpu/bench_kernels --filter "msm_g1 sort" --reps 2 > "$w/g1-new.log" 2>&1
echo "rc $?"; grep -E "ms \(floor|WRONG|not run" "$w/g1-new.log" | cut -c1-100
stamp "G1 sort rows, old build's default (reps 2)"
CUZK_MSM_BENCH_LOGS=20,22,23,24,26 CUZK_MSM_BENCH_SORT_TUNINGS="512:10:48:8" \
  timeout "$(lim 60)" ./.gpu-old/bench_kernels --filter "msm_g1 sort" --reps 2 > "$w/g1-old.log" 2>&1
echo "rc $?"; grep -E "ms \(floor|WRONG|not run" "$w/g1-old.log" | cut -c1-100
rm -rf "$CUZK_BENCH_POINTS_DIR"
if [ "$(left)" -ge 100 ]; then
  stamp "GPU prover checks"
  timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks.json" > "$w/checks-prover.log" 2>&1
  echo "rc $?"; grep -E "passed|FAIL" "$w/checks-prover.log" | tail -5
else
  echo "skipped the prover checks: $(left) s left"
fi
pack
stamp done
