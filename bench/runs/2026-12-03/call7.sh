#!/usr/bin/env bash
# 2026-12-03 (second session), call 7. Carries .gpu-ds and .gpu-prover-ds:
# the cuzk-cuda and cuzk-gpu GPU checks built from branch `devsplit`
# (device.rs split into device/*, typed launchers, test kernels in their own
# fatbin; plus msm_accumulate_g2o3/o4, the G2 accumulation under register
# caps for 3 and 4 blocks per SM), CUZK_CUDA_ARCHS=90.
#   1. every kernel check (each G2 MSM case with all three builds)
#   2. G2 MSM 2^24 with the three builds (issue 14's row), 3 reps
#   3. every bench row at sizes / 8 (regression check of the split)
#   4. the GPU prover checks
#   5. ncu on the three G2 accumulation builds at 2^22
set -u
out="${OUT:-/tmp}"
t0=$(date +%s); left() { echo $((560 - $(date +%s) + t0)); }
cap() { local want=$1 l; l=$(left); [ "$l" -lt "$want" ] && want=$l; [ "$want" -lt 5 ] && want=5; echo "$want"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv > "$out/gpu.txt" 2>&1
echo "== kernel checks $(date +%T)"
mkdir -p "$out/tests"
OUT="$out/tests" timeout "$(cap 150)" bash .gpu-ds/gpu-test.sh > "$out/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$out/tests/run.log" | tail -8
echo "== g2 bench $(date +%T) ($(left) s left)"
mkdir -p "$out/g2"
timeout "$(cap 100)" ./.gpu-ds/bench_kernels --filter msm_g2 --reps 3 --json-out "$out/g2/bench.json" > "$out/g2/bench.log" 2>&1
echo "rc $?"; grep -E "msm_g2" "$out/g2/bench.log" | tail -4
echo "== bench / 8 $(date +%T) ($(left) s left)"
mkdir -p "$out/b8"
timeout "$(cap 80)" ./.gpu-ds/bench_kernels --shrink 3 --reps 2 --json-out "$out/b8/bench.json" > "$out/b8/bench.log" 2>&1
echo "rc $?"; tail -n 30 "$out/b8/bench.log" | cut -c1-150
echo "== prover checks $(date +%T) ($(left) s left)"
OUT="$out" timeout "$(cap 150)" bash .gpu-prover-ds/gpu-prover-test.sh > "$out/prover.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$out/prover.log" | tail -8
if [ "$(left)" -gt 40 ]; then
    echo "== ncu g2 accumulate $(date +%T) ($(left) s left)"
    sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis"
    timeout "$(( $(left) - 5 ))" /usr/local/cuda/bin/ncu --clock-control none -k "regex:msm_accumulate_g2" --launch-count 3 $sections --csv \
        ./.gpu-ds/bench_kernels --filter msm_g2 --shrink 2 --reps 1 > "$out/ncu-g2acc.csv" 2> "$out/ncu-g2acc.err"
    echo "rc $?"; wc -l "$out/ncu-g2acc.csv"; tail -3 "$out/ncu-g2acc.err"
fi
echo "== done $(date +%T)"
