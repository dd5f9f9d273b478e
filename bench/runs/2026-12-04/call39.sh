#!/usr/bin/env bash
# 2026-12-04 (eighth session), call 39. .gpu at main + the pool's reserved
# and used bytes after each MSM step in CUZK_MSM_PROFILE.
#   G1 2^26 rows with the profile: does the first 3.5 GB allocation (keys,
#   3.4-4.7 ms in call 38) grow the pool's reservation each MSM?
set -u
out="${OUT:-/tmp}"
w=/tmp/call39; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s)
echo "== G1 2^26 $(date +%T)"
CUZK_MSM_BENCH_LOGS=26 CUZK_MSM_PROFILE=1 timeout 90 ./.gpu/bench_kernels --filter msm_g1 --reps 3 > "$w/g1-26.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g1-26.log" | head -1 | cut -c1-70
grep -E "n=67108864" "$w/g1-26.log" | sed -n '1,8p' | cut -c1-400
echo "== done +$(( $(date +%s) - t0 )) s"
tar -C "$w" -czf "$out/logs.tgz" .
