#!/usr/bin/env bash
# Call 95 (2026-12-07, thirtieth session): the porep-like 2^27 partition's
# H MSM in one part against two in one process (the compiled bench's new
# variant, `set_h_parts_min(2)`, 77dfa08; .carry/bins.tgz at 77dfa08).
# Call 93 measured one part at 725.8 ms against call 86's two at 723.3
# (other processes). Predicted: equal within 1% (the bench rows' -24 ms
# for one part not carried over, perhaps the bases' 12.9 GB footprint);
# abc's 17.6 -> 25.5 ms is looked at in the same reports.
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c95"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
tar -xzf .carry/bins.tgz
stamp "compiled bench 27, reps 3"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 3 --device-only \
  --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"
grep -E "compiled bench 2|device path|z prepared|unsplit|parts|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
pack
stamp done
