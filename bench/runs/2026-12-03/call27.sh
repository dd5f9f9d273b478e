#!/usr/bin/env bash
# Prepared 2026-12-03 (sixth session) for the next session: not yet run.
# Binaries: `CUZK_CUDA_ARCHS=90 scripts/gpu-test.sh --prepare` (.gpu) and
# `scripts/gpu-prover-test.sh --prepare` (.gpu-prover) at main.
#   1. why 16-bit windows win from 2^18 to 2^22 (run 20): the MSM's phase
#      times (CUZK_MSM_PROFILE) at widths 15, 16, 17 for G1 2^18 and 2^22
#      (--shrink 2 puts the G1 sizes at 2^18 / 2^22 / 2^24)
#   2. porep-like 2^27 with the copy pool at 12 threads (call 25: upload
#      260.9 ms at 4 threads; predicted ~130 ms, upload + H ~0.42 s)
set -u
out="${OUT:-/tmp}"
w=/tmp/call27; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((540 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "MSM phases at widths 15..17"
CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_WINDOWS=15,17 timeout "$(lim 120)" ./.gpu/bench_kernels --filter msm_g1 --shrink 2 --reps 1 > "$w/profile.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/profile.log" | grep -E "vram( |$)|c=" | cut -c1-60
stamp "compiled bench 27"
timeout "$(( $(left) - 15 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|host path|streamed|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-300
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
