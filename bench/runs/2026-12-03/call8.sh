#!/usr/bin/env bash
# 2026-12-03 (second session), call 8. Carries .gpu-ds and .gpu-prover-ds
# built from branch `devsplit` at the chunk-order commit (the MSM's first
# bucket sums take chunks longest first; call 7's ncu showed 23.3 of 32
# threads active in msm_accumulate_g2), CUZK_CUDA_ARCHS=90; .gpu-ds also
# holds synthesis_bench (cuzk-core, release).
#   1. the MSM and 0/1 kernel checks (both chunk orders, every build)
#   2. G1 MSM 2^20/2^24/2^26 and G2 2^24 with both chunk orders, 3 reps
#   3. the GPU prover checks
#   4. ncu on msm_accumulate_g2 with chunks by length (2^22)
#   5. issue 12: synthesis_bench 24 --repeat 3 --jobs 16
set -u
out="${OUT:-/tmp}"
t0=$(date +%s); left() { echo $((570 - $(date +%s) + t0)); }
cap() { local want=$1 l; l=$(left); [ "$l" -lt "$want" ] && want=$l; [ "$want" -lt 5 ] && want=5; echo "$want"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv > "$out/gpu.txt" 2>&1
echo "== msm checks $(date +%T)"
mkdir -p "$out/tests"
OUT="$out/tests" timeout "$(cap 100)" bash .gpu-ds/gpu-test.sh --filter msm > "$out/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$out/tests/run.log" | tail -8
OUT="$out/tests" timeout "$(cap 60)" bash .gpu-ds/gpu-test.sh --filter sum_selected > "$out/tests/run01.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$out/tests/run01.log" | tail -4
echo "== msm bench $(date +%T) ($(left) s left)"
mkdir -p "$out/msm"
timeout "$(cap 170)" ./.gpu-ds/bench_kernels --filter msm --reps 3 --json-out "$out/msm/bench.json" > "$out/msm/bench.log" 2>&1
echo "rc $?"; grep -E "^msm" "$out/msm/bench.log" | cut -c1-70
echo "== prover checks $(date +%T) ($(left) s left)"
OUT="$out" timeout "$(cap 120)" bash .gpu-prover-ds/gpu-prover-test.sh > "$out/prover.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$out/prover.log" | tail -8
echo "== ncu g2 accumulate $(date +%T) ($(left) s left)"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats"
timeout "$(cap 45)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:msm_(accumulate|chunk_order|chunk_len)" --launch-count 4 $sections --csv \
    ./.gpu-ds/bench_kernels --filter msm_g2 --shrink 2 --reps 1 > "$out/ncu-g2acc.csv" 2> "$out/ncu-g2acc.err"
echo "rc $?"; wc -l "$out/ncu-g2acc.csv"
echo "== synthesis_bench 24 $(date +%T) ($(left) s left)"
timeout "$(cap 240)" ./.gpu-ds/synthesis_bench 24 --repeat 3 --jobs 16 > "$out/synthesis-24.log" 2>&1
echo "rc $?"; tail -n 12 "$out/synthesis-24.log" | cut -c1-300
echo "== done $(date +%T)"
