#!/usr/bin/env bash
# Call 98 (planned 2026-12-07, thirty-first session, when the session's
# device time ended): main at 3a7c656 or later, the first bucket sums'
# chunk T = twice the buckets' mean load (64..512; run 60).
# On an H200: call 88's plan (the headline rows on the issue's card, the
# partition with both H part counts, the 10-partition batches).
# On an H100:
# (1) MSM checks (59 since 8082581: the new "chunks of 2" and "chunks of
#     512" cases through CudaDevice::set_msm_chunk) and prover checks with
#     the final rule (call 97 ran them with the mean itself; every T it
#     picks was checked with T fixed);
# (2) the porep-like 2^27 partition, z prepared, reps 2, its H MSM in two
#     parts of 2^26 (T = 256) and, as the variant, one of 2^27 (T = 512).
#     Predicted: msm h 725 -> ~710 ms, the partition 1401 -> ~1385 ms;
#     the one-part variant gains more (its merge at 256 a bucket).
# Binaries (built at 820417b; rebuild if main moved): .gpu (`CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare`)
# and .gpu-prover packed into .carry/bins.tgz, both at main. Carry
# [".gpu/bench_kernels", ".gpu/gpu_tests", ".carry/bins.tgz"]; run as
#   CALL_BUDGET_S=<budget_left - 150, at most 560> bash bench/runs/planned/call98.sh
set -u
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
if [ "${mem:-0}" -gt 100000 ]; then
  echo "an H200: call 88's plan"
  exec bash bench/runs/planned/call88.sh
fi
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c98"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
tar -xzf .carry/bins.tgz
stamp "MSM checks"
timeout "$(lim 60)" ./.gpu/gpu_tests --filter msm > "$w/checks-msm.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-msm.log" | tail -4 | cut -c1-300
stamp "compiled bench 27, reps 2"
if [ "$(left)" -ge 300 ]; then
  timeout "$(( $(left) - 60 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
    --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
  echo "rc $?"
  grep -E "compiled bench 2|device path|z prepared|parts|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
else
  echo "skipped: $(left) s left, the partition needs ~300"
fi
if [ "$(left)" -gt 50 ]; then
  stamp "prover checks"
  timeout "$(( $(left) - 5 ))" ./.gpu-prover/gpu_prover_test --json-out "$w/checks.json" > "$w/checks-prover.log" 2>&1
  echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-prover.log" | tail -4 | cut -c1-300
fi
pack
stamp done
