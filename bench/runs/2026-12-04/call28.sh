#!/usr/bin/env bash
# 2026-12-04 (seventh session), call 28. Binaries at main edfddf0
# (CUZK_CUDA_ARCHS=90): .gpu (bench_kernels, built at 6d61562's kernels, no
# kernel change since) and .gpu-prover (rebuilt at edfddf0).
#   1. MSM phase times (CUZK_MSM_PROFILE) at widths 15, 16, 17 and 20 for G1
#      2^18 / 2^22 / 2^24 (--shrink 2). Hypothesis (this session): widths
#      whose top window holds only the signed digits' carry or a few bits
#      (c = 14, 15, 17, 18, 21, 23: ceil(256/c) windows, the last starting
#      at bit 252..255) put up to half of all points in 1-8 buckets of that
#      window; the histogram's and scatter's atomics on those few counters
#      serialise, and the merge needs extra passes. Predicted: the extra
#      time of c=15/17 over c=16 sits in "sort" and "merge chunks".
#   2. the same phases at the sizes with the default widths: G1
#      2^26 (c=20), G2 2^24 (c=20): where the 5.5% / 1.5% to the targets
#      could come from besides the accumulation.
set -u
out="${OUT:-/tmp}"
w=/tmp/call28; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((300 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
stamp "G1 phases at widths 15,16,17,20 (shrink 2)"
CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_WINDOWS=15,16,17,20 timeout "$(lim 100)" ./.gpu/bench_kernels --filter msm_g1 --shrink 2 --reps 1 > "$w/profile-small.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/profile-small.log" | cut -c1-60
stamp "G1 2^26 phases (default)"
CUZK_MSM_PROFILE=1 timeout "$(lim 100)" ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/profile-g1.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/profile-g1.log" | cut -c1-60
stamp "G2 phases (default)"
CUZK_MSM_PROFILE=1 timeout "$(lim 90)" ./.gpu/bench_kernels --filter msm_g2 --reps 1 > "$w/profile-g2.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/profile-g2.log" | cut -c1-60
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
