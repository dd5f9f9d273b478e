#!/usr/bin/env bash
# 2026-12-04 (seventh session), call 33. .gpu-scat built from branch `scat`
# (not merged): msm_scatter in passes over bucket ranges, each pass writing
# into about CUZK_MSM_SCATTER_KB of `sorted` (default 16 MB), so that the
# writes stay in the L2 (call 32: one pass over a 2^24 window's 64 MB moved
# 544 MB of DRAM traffic for 67 MB of entries).
#   1. MSM checks with 16 KB regions (multi-pass scatter at every size past
#      ~4096 points)
#   2. G1 rows with one pass (0), 16 MB and 4 MB regions; G2 at 16 MB.
#      Predicted: the sort at 2^24 12.4 -> ~7 ms (scatter 9.4 -> ~4.5),
#      G1 2^24 ~105, G1 2^26 ~405 (if the scatter is ~40 of its 56 ms)
set -u
out="${OUT:-/tmp}"
w=/tmp/call33; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((330 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "MSM checks, 16 KB scatter regions"
CUZK_MSM_SCATTER_KB=16 timeout "$(lim 70)" ./.gpu-scat/gpu_tests --filter "msm/" > "$w/checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks.log" | tail -4 | cut -c1-200
for kb in 0 16384 4096; do
    stamp "G1 rows, scatter region ${kb} KB"
    CUZK_MSM_PROFILE=1 CUZK_MSM_SCATTER_KB=$kb timeout "$(lim 70)" ./.gpu-scat/bench_kernels --filter msm_g1 --reps 2 > "$w/g1-$kb.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/g1-$kb.log" | grep -E "vram +2|sort-shared" | cut -c1-60
done
stamp "G2 rows, 16 MB"
CUZK_MSM_PROFILE=1 timeout "$(lim 60)" ./.gpu-scat/bench_kernels --filter msm_g2 --reps 2 > "$w/g2.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g2.log" | head -1 | cut -c1-60
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
