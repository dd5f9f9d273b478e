#!/usr/bin/env bash
# 2026-12-04 (eleventh session), call 51. .gpu-prover at main + the
# compiled bench's batch option (gpu_prover_test --compiled-batch;
# CUZK_CUDA_ARCHS=90), carried as .carry/bins.tgz.
#   1. Prover checks (regression: cuzk-core's WitnessPart gained
#      skip_prefix).
#   2. porep-like 2^27 compiled bench, device path only, reps 2, then 10
#      partitions (z prepared) by 1 worker and by 2 workers (issue 14's
#      "1 and 10 partitions, 1 and 2 workers").
#   Predicted: 1 worker ~1470 ms a partition (call 48's single partition);
#   2 workers 1300-1400 ms a partition if the budget admits both at once
#   (the phases are GPU-bound; what overlaps is each partition's host side
#   and allocation waits), else the same as one.
set -u
out="${OUT:-/tmp}"
w=/tmp/call51; rm -rf "$w"; mkdir -p "$w/prover"
t0=$(date +%s); left() { echo $((580 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
stamp "prover checks"
OUT="$w/prover" timeout "$(lim 110)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "compiled bench 27, batch 10"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|worker|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
free -g | head -2
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
