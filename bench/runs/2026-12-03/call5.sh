#!/usr/bin/env bash
# 2026-12-03, call 5 (one machine start; the session had 812 s of device
# time left). Carries .gpu (cuzk-cuda kernels and benches), .gpu-subgroup,
# .gpu-prover and .gpu-daemon, all built from main at the merge of the
# `subgroup`, `curio`, `paramgen` and `trace` branches (CUZK_CUDA_ARCHS=90).
#   1. GPU subgroup checks of parameter points: kernels against the CPU,
#      their bench row, and the loader's staged path (issue 17)
#   2. the GPU prover checks (regressions from the merges: refusal at
#      submission, the fixed-base engine under the budget, timeline spans)
#   3. one sweep setting, 1 GiB cap and 1 worker: the daemon generates the
#      porep-like-20/22/24 parameters on the GPU, now under the budget
#      (issue 11: the pool's high-water mark was 2446 MiB under the cap)
#   4. the daemon's quick run, whose trace now has each partition's phases
#      as they happened on the worker's stream (issue 11 item 4)
#   5. ncu inside the G1 MSM kernels when time is left (issue 14)
set -u
out="${OUT:-/tmp}"
t0=$(date +%s); left() { echo $((540 - $(date +%s) + t0)); }
cap() { local want=$1 l; l=$(left); [ "$l" -lt "$want" ] && want=$l; [ "$want" -lt 5 ] && want=5; echo "$want"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv > "$out/gpu.txt" 2>&1
echo "== subgroup $(date +%T)"
mkdir -p "$out/sg"
OUT="$out/sg" timeout "$(cap 90)" bash .gpu/gpu-test.sh --filter subgroup --bench --filter subgroup --reps 3 > "$out/sg/kernels.log" 2>&1
echo "rc $?"; grep -E "subgroup|passed" "$out/sg/kernels.log" | tail -10
OUT="$out/sg" timeout "$(cap 100)" bash .gpu-subgroup/gpu-subgroup-test.sh --log-points 22 > "$out/sg/run.log" 2>&1
echo "rc $?"; tail -14 "$out/sg/run.log"
echo "== prover checks $(date +%T) ($(left) s left)"
OUT="$out" timeout "$(cap 150)" bash .gpu-prover/gpu-prover-test.sh > "$out/prover.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$out/prover.log" | tail -8
echo "== sweep 1GiB w1 $(date +%T) ($(left) s left)"
mkdir -p "$out/sweep1"
OUT="$out/sweep1" SWEEP_LIMITS=1GiB SWEEP_WORKERS=1 timeout "$(cap 120)" bash .gpu-daemon/gpu-daemon-bench.sh --sweep > "$out/sweep1/run.log" 2>&1
echo "rc $?"; tail -3 "$out/sweep1/sweep.log" 2>/dev/null || tail -5 "$out/sweep1/run.log"
echo "== daemon quick $(date +%T) ($(left) s left)"
mkdir -p "$out/quick"
OUT="$out/quick" timeout "$(cap 90)" bash .gpu-daemon/gpu-daemon-bench.sh --quick > "$out/quick/run.log" 2>&1
echo "rc $?"; tail -2 "$out/quick/run.log"
if [ "$(left)" -gt 60 ]; then
    echo "== ncu msm g1 $(date +%T) ($(left) s left)"
    sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats"
    timeout "$(( $(left) - 10 ))" /usr/local/cuda/bin/ncu --clock-control none -k "regex:msm_(accumulate|reduce|bucket)" --launch-count 20 $sections --csv \
        ./.gpu/bench_kernels --filter "msm_g1 vram" --shrink 2 --reps 1 > "$out/ncu-msm-g1.csv" 2> "$out/ncu-msm-g1.err"
    echo "rc $?"; wc -l "$out/ncu-msm-g1.csv"; tail -2 "$out/ncu-msm-g1.err"
fi
echo "== done $(date +%T)"
