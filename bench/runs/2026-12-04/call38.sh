#!/usr/bin/env bash
# 2026-12-04 (eighth session), call 38. .gpu at main + two more profile
# marks (the keys and sorted allocations) and CUZK_POOL_KEEP_GIB.
#   G1 2^26 rows with the profile: the pool's default threshold (a quarter
#   of the card), then 100 GiB. Call 37: msm_digits 2.14 ms in ncu but the
#   profile's "digits" step 5.5-7.6 ms; if the 3.5 GB allocations are
#   mapped afresh, "keys alloc" / "sorted alloc" show it and 100 GiB
#   removes it (predicted then: G1 2^26 ~-8 ms).
set -u
out="${OUT:-/tmp}"
w=/tmp/call38; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((200 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
for keep in default 100; do
    stamp "G1 2^26, pool keeps $keep"
    if [ "$keep" = default ]; then unset CUZK_POOL_KEEP_GIB; else export CUZK_POOL_KEEP_GIB=$keep; fi
    CUZK_MSM_BENCH_LOGS=26 CUZK_MSM_PROFILE=1 timeout "$(lim 80)" ./.gpu/bench_kernels --filter msm_g1 --reps 3 > "$w/g1-26-$keep.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/g1-26-$keep.log" | head -3 | cut -c1-70
    grep "n=67108864" "$w/g1-26-$keep.log" | sed -n '2p;3p' | cut -c1-260
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
