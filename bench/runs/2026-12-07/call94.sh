#!/usr/bin/env bash
# Call 94 (2026-12-07, thirtieth session): call 88's batch step on the
# card lent (an H100; a call naming nvidia-h200 ran on one too): the
# porep-like 2^27 partition, reps 2, and 10 partitions by 1 and 2 workers
# (`--compiled-batch 10`), the issue's "1 and 10 partitions, 1 and 2
# workers". Binaries as call 93's (.carry/bins.tgz at cd76bbc).
# Predicted: one partition ~1410 ms (call 93: 1413.4, z prepared); 10 by
# one worker ~14.1 s; by two, the GPU shared, at most a few % better
# (call 88's note: two workers measured and lost on the kernels alone).
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c94"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
tar -xzf .carry/bins.tgz
stamp "compiled bench 27, reps 2, batch 10"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
  --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"
grep -E "compiled bench 2|device path|z prepared|batch|worker|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
pack
stamp done
