#!/usr/bin/env bash
# Call 77 (twenty-third session): the porep-like 2^27 partition in
# batches with the kernels of calls 73-76 (the sort's warp-shuffle scan,
# the split bucket reduction): 10 partitions by 1 worker and by 2
# (`--compiled-batch 10`; run 25 / call 52 on an H200: 1627.0 and 1561.7
# ms a partition, the copies of the next witness on every core included).
# Predicted on an H200: ~1.61 s and ~1.55 s a partition (the single
# partition's -9 ms; the batch's pace is the copies' and the shared SMs').
# Binaries: .gpu-prover at main (387d38a's kernels), carry [".gpu-prover"],
# ~300 s plus the start.
set -u
. bench/runs/lib.sh 420 /tmp/c77
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "compiled bench 27, batch 10"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|worker|unsplit|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
