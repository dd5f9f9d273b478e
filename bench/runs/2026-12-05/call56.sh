#!/usr/bin/env bash
# 2026-12-05 (fourteenth session), call 56: what call 55 meant to time (its
# filter "msm_g1 vram" named no row group: bench_kernels' --filter matches
# a substring of the group names "msm_g1"/"msm_g2", so nothing ran).
# carry [".carry/bins.tgz", ".carry/prover2.tgz"] (prover2: .gpu-prover
# rebuilt with parameters of uneven B vectors refused before residency).
#   1. G1 2^26 and G2 2^24, default and FP64-mix builds. Predicted after
#      calls 54/55 (the FP64 Fq product no faster than PTX's alone, 2.44e10
#      against 2.56e10/s; side by side 2.58e10): the mix no faster, likely
#      slower (more registers in the accumulation: 154 -> 194 out of line).
#   2. ncu of one G1 accumulation launch at 2^24, both builds: issue
#      slots, pipes, occupancy, stalls.
#   3. prover checks, default build (the two-worker check now first makes
#      resident a set whose b_g2 has one point fewer: refused by name,
#      nothing reserved).
set -u
. bench/runs/lib.sh 400 /tmp/call56
tar -xzf .carry/bins.tgz; tar -xzf .carry/prover2.tgz
mkdir -p "$w/checks"
stamp "prover checks, default build"
timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |uneven" "$w/checks/run.log" | tail -4 | cut -c1-200
for b in gpu gpu-mix; do
    stamp "$b: G1 2^26"
    CUZK_MSM_BENCH_LOGS=26 timeout "$(lim 90)" ./.$b/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/$b-g1.json" > "$w/$b-g1.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/$b-g1.log" | grep -v pinned | cut -c1-90
    stamp "$b: G2 2^24"
    CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 60)" ./.$b/bench_kernels --filter msm_g2 --reps 2 --json-out "$w/$b-g2.json" > "$w/$b-g2.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/$b-g2.log" | head -4 | cut -c1-90
done
for b in gpu gpu-mix; do
    stamp "$b: ncu, G1 accumulation at 2^24"
    CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 70)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:msm_accumulate_g1" --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
      --metrics sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
      ./.$b/bench_kernels --filter msm_g1 --reps 1 > "$w/ncu-$b.log" 2>&1
    echo "rc $?"; grep -E "msm_accumulate|pipe_|issue_active|inst_executed.sum|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Duration|Local" "$w/ncu-$b.log" | head -14 | cut -c1-150
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
