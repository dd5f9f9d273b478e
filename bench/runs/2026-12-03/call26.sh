#!/usr/bin/env bash
# 2026-12-03 (sixth session), call 26: the copy pool's thread count.
# Call 25: porep-like 2^27's z (4.3 GB) went up in 251 ms (17.1 GB/s)
# through the pinned ring, against 120.8 ms (35 GB/s) on 2026-12-01 before
# the copies got their own pool of 4 threads. .gpu-prover built at main
# with CUZK_COPY_THREADS (CUZK_CUDA_ARCHS=90). Predicted: the upload scales
# with threads until the host's memory or the link (55 GB/s) binds: 2^24
# copies 29.7 ms at 4 threads, ~16 at 8.
set -u
out="${OUT:-/tmp}"
w=/tmp/call26; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((200 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
for th in 4 8 12 16; do
    stamp "compiled bench 24, $th copy threads"
    CUZK_COPY_THREADS=$th timeout "$(lim 45)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24-t$th.log" 2>&1
    echo "rc $?"; grep -E "device path:|streamed:|device path [0-9]" "$w/bench24-t$th.log" | cut -c1-200
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
