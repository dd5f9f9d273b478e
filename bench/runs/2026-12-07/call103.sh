#!/usr/bin/env bash
# Call 103 (2026-12-07, thirty-third session): main with max_pinned_cache
# 2 GiB by default (calls 88/101 on the H200: with 1 GiB one worker's
# staged form buffer was page-locked afresh for every other partition,
# 140-350 ms against 19 ms into a kept one). Carry [".carry/bins.tgz"].
# (1) h2d_bench 1 GiB, reps 3: page-locking in place (register_s) against
#     the pinned copy, for the form's other way (registering it in place);
# (2) porep-like 2^27, reps 2, batch 10: 1 worker staged / not, 2 workers
#     staged / not. Predicted on an H200: 2 workers staged 1359-1381 ->
#     ~1350-1360 (host prep ~19 ms every partition); on an H100 (the
#     partitions serialized by admission): 2 workers 1470.8 (call 100,
#     unstaged) -> ~1395 staged.
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c103"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
tar -xzf .carry/bins.tgz
stamp "h2d_bench 1 GiB, reps 3"
timeout "$(lim 60)" ./.gpu-prover/h2d_bench 1 3 --json > "$w/h2d.log" 2>&1
echo "rc $?"; tail -c 1500 "$w/h2d.log"
stamp "compiled bench 27, reps 2, batch 10"
timeout "$(( $(left) - 15 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
  --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"
grep -E "compiled bench 2|device path|z prepared|worker|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-420
pack
stamp done
