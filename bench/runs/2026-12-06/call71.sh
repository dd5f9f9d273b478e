#!/usr/bin/env bash
# Call 71 (twenty-second session): the GPU prover with the staged
# shared-memory sort as its MSMs' sort (CUZK_MSM_SORT=shared at device
# open; call 70 on an H100: G1 2^24 104.52 -> 102.00 ms, 2^26 400.81 ->
# 396.42, G2 2^24 326.97 -> 324.50 against the atomic sort), on an H100
# 80GB: the prover checks (the placement check's requirement on
# PartitionReport.h_msm_parts, d8c246c, not yet run on a GPU), then the
# 2^27 partition on the 80 GB card itself (call 69 under the H100's cap on
# an H200: Resident, H in 2 parts, 1598.6 ms, z prepared 1475.5; predicted
# here ~1.60 s, ~1.47 prepared with the shared sort; the bench also runs
# z prepared with the atomic sort in the same process). Then the MSM
# phases at 2^26 of the three sorts (CUZK_MSM_PROFILE).
# Binaries: .gpu and .gpu-prover at 5ba0c0e-ish (see BENCHMARKS), carry
# [".gpu", ".gpu-prover"], ~420 s plus the start.
set -u
. bench/runs/lib.sh 470 /tmp/c71
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
export CUZK_MSM_SORT=shared
stamp "prover checks (shared sort)"
timeout "$(lim 90)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |capacity [0-9]+:|two workers under" "$w/checks/run.log" | tail -8 | cut -c1-300
stamp "compiled bench 27, one partition, reps 2 (shared sort; atomic too)"
timeout "$(( $(left) - 60 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z packed|z prepared|sort|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
unset CUZK_MSM_SORT
stamp "msm phases at 2^26, each sort"
CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_LOGS=26 timeout "$(lim 55)" ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/prof.log" 2>&1
echo "rc $?"; grep -E "msm profile" "$w/prof.log" | head -6 | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
