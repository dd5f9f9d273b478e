#!/usr/bin/env bash
# 2026-12-04 (eleventh session), call 52. .gpu-prover at main + the
# compiled bench's batch option (gpu_prover_test --compiled-batch;
# CUZK_CUDA_ARCHS=90), carried as .carry/bins.tgz.
#   The same bench as call 51 without the prover checks (passed there), the
#   batch's witnesses now copied on every core (call 51's single-threaded
#   clones, ~3 s each, set the pace: 3041 ms a partition with one worker).
#   Predicted: 1 worker ~1470 ms a partition; 2 workers 1300-1400 if the
#   budget admits both at once, else about the same as one.
set -u
out="${OUT:-/tmp}"
w=/tmp/call52; rm -rf "$w"; mkdir -p "$w/prover"
t0=$(date +%s); left() { echo $((580 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
stamp "compiled bench 27, batch 10"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|worker|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
free -g | head -2
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
