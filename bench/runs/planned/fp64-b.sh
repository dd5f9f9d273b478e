#!/usr/bin/env bash
# Planned (2026-12-04, twelfth session; not run). Second of three calls
# measuring field_f64.cuh, the same .carry/bins.tgz as fp64-a.sh (carry
# [".carry/bins.tgz"]).
#   1. G1 MSM rows 2^20/2^24/2^26 (both G1 builds), G2 2^24, default and
#      mix builds. Predicted: G1 2^26 395 -> 310-340 ms (the accumulation
#      ~80% of it, its products ~1.6x faster mixed; occupancy: the out-of-
#      line build's accumulation 154 -> 194 registers, 3 -> 2 blocks of
#      128 an SM, the inline build's 156 -> 168, still 3), G2 2^24 326 ->
#      ~260 (a third of its Fq products on the FP64 pipe).
#   2. ncu of bench_fq_mul: PTX (variant 0, launches 0-3), FP64 (4,
#      launches 16-19), side by side (6, launches 24-27): pipe use (fp64,
#      fmaheavy, alu), issue slots, stalls.
set -u
. bench/runs/lib.sh 560 /tmp/fp64b
tar -xzf .carry/bins.tgz
for b in gpu gpu-mix; do
    stamp "$b: G1 rows"
    timeout "$(lim 110)" ./.$b/bench_kernels --filter "msm_g1 vram" --reps 2 --json-out "$w/$b-g1.json" > "$w/$b-g1.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor|^msm_g1" "$w/$b-g1.log" | cut -c1-90
    stamp "$b: G2 2^24"
    CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 70)" ./.$b/bench_kernels --filter "msm_g2 vram" --reps 2 --json-out "$w/$b-g2.json" > "$w/$b-g2.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor|^msm_g2" "$w/$b-g2.log" | head -4 | cut -c1-90
done
stamp "ncu bench_fq_mul variants 0, 4, 6"
for skip in 0 16 24; do
    timeout "$(lim 60)" /usr/local/cuda/bin/ncu --clock-control none -k bench_fq_mul --launch-skip $skip --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
      --metrics sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
      ./.gpu/bench_kernels --filter none-at-all --reps 1 > "$w/ncu-$skip.log" 2>&1
    echo "rc $? (skip $skip)"; grep -E "pipe_|issue_active|Issue Slots Busy|Achieved Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued|Compute \(SM\) Throughput|Duration" "$w/ncu-$skip.log" | head -16 | cut -c1-150
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
