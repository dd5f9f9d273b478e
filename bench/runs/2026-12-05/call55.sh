#!/usr/bin/env bash
# 2026-12-05 (fourteenth session), call 55: after call 54 (fp64-a.sh) found
# the FP64 mix slower (card: Fq FP64 product 2.444e10/s against PTX's
# 2.560e10, side by side 2.577e10; NTT 2^27 44.70 -> 47.55 ms; 0/1 17.97 ->
# 21.49 ms). carry [".carry/bins.tgz", ".carry/prover.tgz"].
#   1. prover checks, default build (stop 36's refactor of the MSM entry
#      points under the prover) and the mix build.
#   2. G1 2^26 and G2 2^24, both builds (predicted now: the mix no faster).
#   3. ncu of bench_fq_mul variants 0 (PTX), 4 (FP64), 6 (side by side):
#      why the FP64 product does not beat PTX (issue slots, pipes).
#   4. the default build's porep-like 2^27 partition (reference on this
#      machine: run 25's 1463.7 ms).
set -u
. bench/runs/lib.sh 560 /tmp/call55
mkdir -p "$w/checks" "$w/checks-mix"
tar -xzf .carry/bins.tgz; tar -xzf .carry/prover.tgz
stamp "prover checks, default build"
timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/run.log" | tail -4 | cut -c1-200
stamp "prover checks, mix build"
timeout "$(lim 100)" ./.gpu-prover-mix/gpu_prover_test --json-out "$w/checks-mix/checks.json" > "$w/checks-mix/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-mix/run.log" | tail -4 | cut -c1-200
for b in gpu gpu-mix; do
    stamp "$b: G1 2^26"
    CUZK_MSM_BENCH_LOGS=26 timeout "$(lim 60)" ./.$b/bench_kernels --filter "msm_g1 vram" --reps 2 --json-out "$w/$b-g1.json" > "$w/$b-g1.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/$b-g1.log" | cut -c1-90
    stamp "$b: G2 2^24"
    CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 50)" ./.$b/bench_kernels --filter "msm_g2 vram" --reps 2 --json-out "$w/$b-g2.json" > "$w/$b-g2.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/$b-g2.log" | head -4 | cut -c1-90
done
stamp "ncu bench_fq_mul variants 0, 4, 6"
for skip in 0 16 24; do
    timeout "$(lim 45)" /usr/local/cuda/bin/ncu --clock-control none -k bench_fq_mul --launch-skip $skip --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section InstructionStats \
      --metrics sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
      ./.gpu/bench_kernels --filter none-at-all --reps 1 > "$w/ncu-$skip.log" 2>&1
    echo "rc $? (skip $skip)"; grep -E "pipe_|issue_active|inst_executed.sum|Issue Slots Busy|Achieved Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued|Compute \(SM\) Throughput|Duration" "$w/ncu-$skip.log" | head -16 | cut -c1-150
done
if [ "$(left)" -gt 150 ]; then
    stamp "gpu-prover: compiled bench 27, one partition"
    timeout "$(lim 200)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/default-27.json" > "$w/default-27.log" 2>&1
    echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|H steps|FAIL|passed" "$w/default-27.log" | grep -v "^ok" | cut -c1-400
fi
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
