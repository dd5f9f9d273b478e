#!/usr/bin/env bash
# 2026-12-03 (sixth session), call 24: call 23's binaries (.gpu at
# b41a396). Call 23 found c=16 far ahead at 2^18 / 2^22 (G1 3.40 against
# 5.16 and 32.16 against 40.14 ms; G2 2^22 97.43 against 117.41), a width
# the earlier sweeps never tried at 2^24 / 2^26. This call: widths 14..20
# at G1 2^20 / 2^24 / 2^26 and G2 2^24.
set -u
out="${OUT:-/tmp}"
w=/tmp/call24; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((240 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "window widths"
CUZK_MSM_BENCH_WINDOWS=14,15,16,17,18,19,20 timeout "$(lim 220)" ./.gpu/bench_kernels --filter msm --reps 2 --json-out "$w/win.json" > "$w/win.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/win.log" | grep -E "vram( |$)|c=" | cut -c1-60
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
