#!/usr/bin/env bash
# 2026-12-03 (sixth session), call 22. Binaries built at main 6d61562
# (branch phases merged: prove_partition_in as named phases; the streamed
# system's table and densities through the pinned ring with z; MSM window
# width settable for benchmarks), CUZK_CUDA_ARCHS=90:
#   .gpu         scripts/gpu-test.sh --prepare
#   .gpu-prover  scripts/gpu-prover-test.sh --prepare
# Steps:
#   1. every GPU prover check (phases, copy_up and the aux-through-ring
#      change are all on paths they cover)
#   2. porep-like 2^24 by the compiled path, resident / host / streamed
#      (call 20: streamed upload 85.4 ms against 36.0 resident; predicted
#      now ~40 ms: ~50 MB more through the ring at ~18 GB/s)
#   3. MSM rows at other window widths (CUZK_MSM_BENCH_WINDOWS=auto: the
#      model's width -3..+3) for G1 2^20/2^24/2^26 and G2 2^24
#   4. ncu inside the 0/1 sum (G1, both builds) at 2^24
set -u
out="${OUT:-/tmp}"
w=/tmp/call22; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((420 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$w/gpu.txt" 2>&1
stamp "prover checks"
mkdir -p "$w/prover"
OUT="$w/prover" timeout "$(lim 120)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "compiled bench 24"
timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench|device path|host path|streamed|upload|passed, " "$w/bench24.log" | cut -c1-300
stamp "msm window rows"
CUZK_MSM_BENCH_WINDOWS=auto timeout "$(lim 180)" ./.gpu/bench_kernels --filter msm --reps 2 --json-out "$w/msm.json" > "$w/msm.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/msm.log" | cut -c1-72
stamp "ncu 0/1 sum"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats"
timeout "$(lim 90)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:sum_selected_g1" --launch-count 2 $sections \
    ./.gpu/bench_kernels --filter sum_selected --shrink 2 --reps 1 > "$w/ncu-sum01.txt" 2> "$w/ncu-sum01.err"
echo "rc $?"; grep -E "sum_selected|Duration|Registers|Achieved Occupancy|Compute \(SM\) Throughput|Issue Slots Busy|Stall|Theoretical Occupancy" "$w/ncu-sum01.txt" | head -40
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
