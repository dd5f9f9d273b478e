#!/usr/bin/env bash
# Call 92 (planned in the twenty-ninth session, 2026-12-07, when every
# start was refused). On an H200 it is call 88's
# plan (bench/runs/planned/call88.sh: the headline rows on the issue's
# card) and nothing else. On an H100 (.gpu built at cfb1ecc or later:
# `CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare`):
# G1 windows of 22 bits (12 windows instead of 13 at c = 20) with the
# shared-memory sort and the split bucket reduction, which no run has
# measured (run 20 had the atomic sort: 2^26 c = 22 456.4 against c = 20
# 423.5 ms). Model (call 86's H100 figures): the accumulation (~87% of
# the MSM, ~323 ms at 2^26) shrinks by 1/13 (-25 ms); the bucket
# reduction, independent of n, grows with the buckets 2^21 x 12 / 2^19 x
# 13 = 3.7x (~10 -> ~37 ms). Predicted: 2^26 about even (+-5 ms), 2^24
# ~+20 ms, 2^27 (the H200's H MSM, in one part) ~-23 ms (~3%).
# (0) the new checks of MSMs at windows of 21 and 22 bits (gpu_tests
#     --filter "window 2": G1 1000 and 65539 points, G2 1000, every
#     build, chunk order and reduction form, signed-digit edge scalars);
# (1) G1 rows 2^26 and 2^27 (new this session: the 2^26 points twice),
#     reps 2, with CUZK_MSM_BENCH_WINDOWS=22;
# (2) 2^24 the same with CUZK_MSM_PROFILE (phases, reps 1): the
#     reduction's cost at c = 22 beside c = 20's.
# Carry [".gpu/bench_kernels", ".gpu/gpu_tests", ".carry/bins.tgz"]; run as
#   CALL_BUDGET_S=560 bash bench/runs/planned/call92.sh
set -u
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
if [ "${mem:-0}" -gt 100000 ]; then
  echo "an H200: call 88's plan"
  exec bash bench/runs/planned/call88.sh
fi
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c92"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "checks at windows of 21 and 22 bits"
timeout "$(lim 60)" ./.gpu/gpu_tests --filter "window 2" > "$w/checks-windows.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-windows.log" | tail -6 | cut -c1-300
stamp "G1 2^26 and 2^27, c = 20 and 22, reps 2"
CUZK_MSM_BENCH_WINDOWS=22 CUZK_MSM_BENCH_LOGS=26,27 timeout "$(lim 330)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 > "$w/g1-2627.log" 2>&1
echo "rc $?"; grep -E "^msm_g1 vram" "$w/g1-2627.log" | grep "ms (floor" | cut -c1-110
stamp "G1 2^24 profiled, c = 20 and 22, reps 1"
CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_WINDOWS=22 CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 120)" ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/g1-24-profile.log" 2>&1
echo "rc $?"; grep -E "^msm_g1 vram" "$w/g1-24-profile.log" | grep "ms (floor" | cut -c1-110
grep -E "^msm profile" "$w/g1-24-profile.log" | head -6 | cut -c1-300
pack
stamp done
