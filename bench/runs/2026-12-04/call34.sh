#!/usr/bin/env bash
# 2026-12-04 (eighth session), call 34. .gpu built from main + the Fq
# squaring (mont_sqr_ptx: 236 IMAD against the product's 302 in SASS,
# sm_90) and the sort's steps in CUZK_MSM_PROFILE, CUZK_CUDA_ARCHS=90.
#   1. kernel checks (field/fq ops and near-p cases square through the new
#      routine; every MSM and curve case) and the large MSM checks
#   2. G1 rows with the profile (card line: Fq sqr/s; predicted 1.25x the
#      product rate; G1 2^26 425 -> ~408, 2^24 106.9 -> ~103)
#   3. G1 2^26 only, the scatter in 8 passes of 32 MB and 4 of 64 MB
#      (call 33: 16 passes of 16 MB lost 13.8 ms; which step of the sort
#      costs the 54 ms is now printed)
#   4. G2 rows (no Fq squaring on G2's paths: unchanged, ~326)
set -u
out="${OUT:-/tmp}"
w=/tmp/call34; rm -rf "$w"; mkdir -p "$w/tests" "$w/large"
t0=$(date +%s); left() { echo $((540 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "kernel checks"
OUT="$w/tests" timeout "$(lim 130)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -6 | cut -c1-200
OUT="$w/large" timeout "$(lim 90)" bash .gpu/gpu-test.sh --large --filter "msm/g" > "$w/large/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/large/run.log" | tail -6 | cut -c1-200
stamp "G1 rows"
CUZK_MSM_PROFILE=1 timeout "$(lim 110)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/g1.json" > "$w/g1.log" 2>&1
echo "rc $?"; grep -E "^card|Fq mul|ms \(floor" "$w/g1.log" | cut -c1-240
for v in "32768 8" "65536 4"; do
    set -- $v
    stamp "G1 2^26, scatter regions $1 KB, at most $2 passes"
    CUZK_MSM_BENCH_LOGS=26 CUZK_MSM_SCATTER_KB=$1 CUZK_MSM_SCATTER_PASSES_MAX=$2 CUZK_MSM_PROFILE=1 \
        timeout "$(lim 75)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 > "$w/g1-26-$1.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/g1-26-$1.log" | head -2 | cut -c1-70
done
stamp "G2 rows"
CUZK_MSM_PROFILE=1 timeout "$(lim 75)" ./.gpu/bench_kernels --filter msm_g2 --reps 2 --json-out "$w/g2.json" > "$w/g2.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g2.log" | head -2 | cut -c1-60
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
