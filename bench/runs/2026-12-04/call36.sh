#!/usr/bin/env bash
# 2026-12-04 (eighth session), call 36. .gpu-prover as call 35.
#   porep-like 2^27, one partition, 16 copy threads (call 31: 12 threads,
#   raw upload 123.2 ms, packed 155.9; packing is bound by each thread's
#   reads, so predicted packed ~120, raw ~115 if the link allows); the H
#   MSM (2^27) now scatters in 4 passes of 128 MB and squares: msm h 826
#   -> ~770 ms predicted (2x call 34's 2^26 gain)
set -u
out="${OUT:-/tmp}"
w=/tmp/call36; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((560 - $(date +%s) + t0)); }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "compiled bench 27"
CUZK_COPY_THREADS=16 timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|host path|streamed|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-320
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
