#!/usr/bin/env bash
# 2026-12-04 (seventh session), call 31. .gpu-prover at bb52cc2 (MSM: the
# atomic sort and the in-place merge; z packing decides on ~512 groups),
# CUZK_CUDA_ARCHS=90.
#   1. every GPU prover check (call 30 failed one: porep-like 2^10's z went
#      up raw because the pack decision read only its first group)
#   2. porep-like 2^27, one partition: z packed, then raw, on one warm
#      backend (call 25: upload 260.9 ms at 4 copy threads; predicted raw
#      ~130 ms at 12 threads; packed: 2^24 lost in call 30, copies 21.0
#      against 17.4 ms, so packed ~165 ms at 2^27 unless the link limits)
set -u
out="${OUT:-/tmp}"
w=/tmp/call31; rm -rf "$w"; mkdir -p "$w/prover"
t0=$(date +%s); left() { echo $((520 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "prover checks"
OUT="$w/prover" timeout "$(lim 150)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "compiled bench 27"
timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|host path|streamed|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-320
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
