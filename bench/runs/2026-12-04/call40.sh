#!/usr/bin/env bash
# 2026-12-04 (ninth session), call 40. .gpu-prover at cc97816 (z's 0/1 form
# made on the synthesis side and sent as it is), CUZK_CUDA_ARCHS=90.
#   1. every GPU prover check (z round trips now also from a prepared form
#      and from a stale one, which must be refused and packed instead)
#   2. porep-like 2^27 compiled bench, device path only: z raw (default),
#      packed on the way, and prepared. Predicted: prepared upload 20-30 ms
#      (652 MB over the link at ~50 GB/s, the ring's host copies beside it)
#      against raw ~97-123 and packed-on-the-way ~128-156; the 0/1 form
#      made in ~100-150 ms on 16 cores (a read of 4.3 GB).
set -u
out="${OUT:-/tmp}"
w=/tmp/call40; rm -rf "$w"; mkdir -p "$w/prover"
t0=$(date +%s); left() { echo $((560 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "prover checks"
OUT="$w/prover" timeout "$(lim 200)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
grep -E "prepared|stale" "$w/prover/run.log" | grep -v "^ok" | head -5
grep -cE "^ok .*(prepared|stale)" "$w/prover/run.log"
stamp "compiled bench 27"
timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-330
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
