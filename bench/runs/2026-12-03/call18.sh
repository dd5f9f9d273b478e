#!/usr/bin/env bash
# 2026-12-03 (fifth session), call 18: call 17's kernel rows again with
# filters that match (bench_kernels' --filter is a substring of a section
# name: "msm_g1 vram" matched nothing in call 17), on call 17's binaries
# (.gpu, built from main 94d36cb + the r16 merge, CUZK_CUDA_ARCHS=90):
#   1. every MSM row (G1 2^18-2^26 in every form, resident and pinned; G2)
#   2. the 0/1 sum (call 17's 20 s cap ended while the 2^26 points were
#      being generated)
set -u
out="${OUT:-/tmp}"
w=/tmp/call18; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((300 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "msm rows"
timeout "$(lim 190)" ./.gpu/bench_kernels --filter msm --reps 2 --json-out "$w/msm.json" > "$w/msm.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/msm.log" | cut -c1-72
stamp "0/1 sum"
timeout "$(lim 90)" ./.gpu/bench_kernels --filter sum_selected --reps 3 --json-out "$w/sum01.json" > "$w/sum01.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/sum01.log" | cut -c1-72
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
