#!/usr/bin/env bash
# 2026-12-04 (twelfth session), call 54. Two builds of gpu_tests and
# bench_kernels, CUZK_CUDA_ARCHS=90, carried as .carry/bins.tgz:
#   .gpu      main + kernels/field_f64.cuh (Fq products with the limb
#             products as DFMAs: test_fq_f64, bench variants 4-6); the MSM
#             kernels unchanged (mul_fp64 is operator*).
#   .gpu-mix  the same with CUZK_NVCC_DEFINES=CUZK_FP64_MIX: about half of
#             each point formula's Fq products (and one of each Fq2
#             product's three) on the FP64 pipe.
#   1. kernel checks, both builds (field/fq fp64 products against blst; the
#      mix build's curve, MSM, 0/1 and fixed-base cases through the mix).
#   2. card (Fq rates) and the MSM / 0/1 rows, both builds.
#      Predicted: FP64 product 1.3x PTX's 26.2e9/s (~34e9: ~950 issue
#      cycles a warp-product against ~1276 IMAD-pipe cycles); PTX and FP64
#      chains side by side ~45e9; G1 2^26 425 -> 340-370 ms, G2 2^24
#      326 -> ~260, 0/1 sum 18.1 -> 13-14 (registers rise: accumulate_g1
#      154 -> 194, g1i 156 -> 168).
#   3. ncu of bench_fq_mul: PTX (variant 0), FP64 (4), side by side (6).
set -u
out="${OUT:-/tmp}"
w=/tmp/call54; rm -rf "$w"; mkdir -p "$w/tests" "$w/tests-mix"
t0=$(date +%s); left() { echo $((540 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
stamp "kernel checks, base"
OUT="$w/tests" timeout "$(lim 100)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |fp64" "$w/tests/run.log" | tail -6 | cut -c1-200
stamp "kernel checks, mix"
timeout "$(lim 100)" ./.gpu-mix/gpu_tests > "$w/tests-mix/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests-mix/run.log" | tail -6 | cut -c1-200
for b in gpu gpu-mix; do
    stamp "$b: card, G1 rows"
    timeout "$(lim 90)" ./.$b/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/$b-g1.json" > "$w/$b-g1.log" 2>&1
    echo "rc $?"; grep -E "^card|Fq |ms \(floor" "$w/$b-g1.log" | cut -c1-240
    stamp "$b: G2 rows"
    CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 60)" ./.$b/bench_kernels --filter msm_g2 --reps 2 --json-out "$w/$b-g2.json" > "$w/$b-g2.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/$b-g2.log" | head -3 | cut -c1-70
    stamp "$b: 0/1 rows"
    timeout "$(lim 50)" ./.$b/bench_kernels --filter sum_selected --reps 3 --json-out "$w/$b-ss.json" > "$w/$b-ss.log" 2>&1
    echo "rc $?"; grep -E "sum_selected" "$w/$b-ss.log" | cut -c1-120
done
stamp "ncu bench_fq_mul variants 0, 4, 6"
for skip in 0 16 24; do
    timeout "$(lim 60)" /usr/local/cuda/bin/ncu --clock-control none -k bench_fq_mul --launch-skip $skip --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section InstructionStats \
      --metrics sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
      ./.gpu/bench_kernels --filter none-at-all --reps 1 > "$w/ncu-$skip.log" 2>&1
    echo "rc $? (skip $skip)"; grep -E "pipe_|issue_active|Issue Slots Busy|Achieved Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued|Compute \(SM\) Throughput|Duration" "$w/ncu-$skip.log" | head -16 | cut -c1-150
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
