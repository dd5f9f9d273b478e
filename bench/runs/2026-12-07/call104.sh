#!/usr/bin/env bash
# Call 104 (2026-12-07, thirty-fourth session): main at f5b6679 (z's 0/1
# form staged before admission, max_pinned_cache 2 GiB), the porep-like
# 2^27 batches that call 103 did not reach. Carry [".carry/bins.tgz"].
# porep-like 2^27, reps 2, batch 10: 1 worker staged / not, 2 workers
# staged / not. Predicted on an H200 (two working sets fit, partitions
# overlap): 2 workers staged ~1350-1360 ms a partition (call 102: 1359.4
# / 1380.7 with the 1 GiB cache); on an H100 (admission serializes the
# two workers' partitions): 2 workers 1470.8 (call 100, form written as
# it goes up) -> ~1395 staged, the unstaged row ~1470 again.
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c104"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
tar -xzf .carry/bins.tgz
stamp "compiled bench 27, reps 2, batch 10"
timeout "$(( $(left) - 15 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
  --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"
grep -E "compiled bench 2|device path|z prepared|worker|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-420
pack
stamp done
