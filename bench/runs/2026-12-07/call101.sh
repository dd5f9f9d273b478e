#!/usr/bin/env bash
# Call 101 (2026-12-07, thirty-third session): main at the StagedForm
# commit (z's 0/1 form written into pinned memory before the partition
# waits for the device). Carry [".carry/bins.tgz"] (.gpu-prover at main).
# (1) prover checks: the z round trips now include "prepared, staged" and
#     "stale form, staged" (the second piece crossing case among them);
# (2) porep-like 2^27, reps 2, --compiled-batch 10: one partition, then 10
#     partitions by 1 worker (staged), 2 workers (staged), 2 workers (the
#     form written into the ring as it goes up, as before). Predicted (H100):
#     2 workers 1470.8 -> ~1395 ms a partition staged; unstaged as call 100;
#     1 worker ~1560-1575 (staging is serial there: the same host work
#     before the turn instead of inside it, plus ~13 ms of DMA no longer
#     overlapped with it).
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c101"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
tar -xzf .carry/bins.tgz
stamp "prover checks"
timeout "$(lim 90)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks.json" > "$w/checks-prover.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |staged" "$w/checks-prover.log" | tail -12 | cut -c1-300
stamp "compiled bench 27, reps 2, batch 10"
timeout "$(( $(left) - 20 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
  --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"
grep -E "compiled bench 2|device path|z prepared|worker|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-420
pack
stamp done
