#!/usr/bin/env bash
# 2026-12-04 (tenth session), call 48. .gpu-prover at main + the budget's
# free-memory reading at admission without trimming the pool (free + the
# pool's unused bytes; CUZK_CUDA_ARCHS=90), carried as .carry/bins.tgz.
#   1. Prover checks (budget, caps, the fault hook, two workers).
#   2. porep-like 2^27 compiled bench, device path only, reps 3.
#   Predicted: z's allocation 8 -> ~0 ms (calls 43-47: the trim before each
#   partition handed the pool's memory back), upload + H ~285 ms; a/b/c and
#   the MSMs' first allocations a little faster too.
set -u
out="${OUT:-/tmp}"
w=/tmp/call48; rm -rf "$w"; mkdir -p "$w/prover"
t0=$(date +%s); left() { echo $((560 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
stamp "prover checks"
OUT="$w/prover" timeout "$(lim 120)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "compiled bench 27"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 3 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|pool keeps|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
