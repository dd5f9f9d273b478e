#!/usr/bin/env bash
# Call 97 (2026-12-07, thirty-first session): the first bucket sums' chunk
# T by the buckets' load (branch chunkload, 28ab7d8: host::msm_chunk,
# T = the mean load m / 2^(c-1) rounded down to a power of two, 64..256;
# `CUZK_MSM_CHUNK` fixes it). Call 96's profile: at G1 2^26 "merge
# chunks" takes 10.9 ms (~9e6 full additions, ~3x an accumulated
# addition's cost), at 2^24 0.35 (32 a bucket: one chunk of 64 each).
# (1) MSM checks with the load's chunk, then with T fixed at 2 (every
#     merge pass, several passes) and 512 (the order kernels' limit);
# (2) G1 rows 2^22 (c = 16: 128 a bucket), 2^24, 2^26, reps 2, profiled,
#     for T = the load's, 64 (main), 128, 256, 512.
# Predicted: 2^26 T = 128 merge 10.9 -> ~3 ms, accumulation +~2 ms, the
# row 362 -> ~356 ms; T = 256 ~-7 ms; 2^24 unchanged within 0.5%; 2^22
# like 2^26 in proportion (-1..-2%).
# (3) the porep-like 2^27 partition, z prepared, reps 2, with the load's
#     chunk (.gpu-prover at chunkload in .carry/bins.tgz): two H parts of
#     2^26 take T = 128 (the variant in one part T = 256); predicted msm h
#     725 -> ~712 ms, the partition 1401 -> ~1385 on an H100;
# (4) the prover checks (pool high-water marks against msm_scratch_bytes,
#     whose chunk bounds shrink with T), if time is left.
# Carry [".gpu/bench_kernels", ".gpu/gpu_tests", ".carry/bins.tgz"]
# (CUZK_CUDA_ARCHS=90).
#   CALL_BUDGET_S=560 bash bench/runs/2026-12-07/call97.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c97"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
for t in load 2 512; do
  stamp "MSM checks, T $t"
  if [ "$t" = load ]; then unset CUZK_MSM_CHUNK; else export CUZK_MSM_CHUNK=$t; fi
  timeout "$(lim 60)" ./.gpu/gpu_tests --filter msm > "$w/checks-msm-$t.log" 2>&1
  echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-msm-$t.log" | tail -4 | cut -c1-300
done
for t in load 64 128 256 512; do
  stamp "G1 2^22, 2^24, 2^26 profiled, T $t"
  if [ "$t" = load ]; then unset CUZK_MSM_CHUNK; else export CUZK_MSM_CHUNK=$t; fi
  CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_LOGS=22,24,26 timeout "$(lim 55)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 > "$w/g1-$t.log" 2>&1
  echo "rc $?"; grep -E "^msm_g1 vram( merge-copy)? " "$w/g1-$t.log" | grep "ms (floor" | cut -c1-100
  for n in 4194304 16777216 67108864; do
    grep -E "^msm profile msm_g1 n=$n c=" "$w/g1-$t.log" | head -2 | tail -1 \
      | sed -E 's/.*(n=[0-9]+ c=[0-9]+): .*(sort [0-9.]+).*(accumulate [0-9.]+).*(merge chunks [0-9.]+).*/\1 \2 \3 \4/'
  done
done
unset CUZK_MSM_CHUNK
tar -xzf .carry/bins.tgz
stamp "compiled bench 27, reps 2, the load's chunk"
if [ "$(left)" -ge 280 ]; then
  timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
    --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
  echo "rc $?"
  grep -E "compiled bench 2|device path|z prepared|parts|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
else
  echo "skipped: $(left) s left, the partition needs ~280"
fi
if [ "$(left)" -gt 100 ]; then
  stamp "prover checks"
  timeout "$(( $(left) - 5 ))" ./.gpu-prover/gpu_prover_test --json-out "$w/checks.json" > "$w/checks-prover.log" 2>&1
  echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-prover.log" | tail -6 | cut -c1-300
fi
pack
stamp done
