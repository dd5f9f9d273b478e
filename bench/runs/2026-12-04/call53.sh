#!/usr/bin/env bash
# 2026-12-04 (eleventh session), call 53. .gpu (gpu_tests, bench_kernels)
# at main + the 0/1 sum's prefetching kernels (sum_selected_pf_*: each
# thread loads its next point before adding the current one; G1 capped at
# 3 blocks of 128 an SM, 168 registers and 96 B of spill stores; G2 246
# registers, 2 blocks), CUZK_CUDA_ARCHS=90, carried as .carry/bins.tgz.
#   1. The 0/1 checks: every case with both G1 builds and both prefetch
#      settings, G2 with both prefetch settings, against the CPU.
#   2. bench_kernels sum_selected rows (2^26 points, half selected).
#   Predicted: little or nothing (run 19's ncu put 54% of the stalls on the
#   products' fixed-latency dependencies, not on loads): 17.8 -> 17-18 ms.
set -u
out="${OUT:-/tmp}"
w=/tmp/call53; rm -rf "$w"; mkdir -p "$w/tests"
t0=$(date +%s); left() { echo $((400 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
stamp "0/1 checks"
OUT="$w/tests" timeout "$(lim 120)" bash .gpu/gpu-test.sh --filter sum_selected > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -6 | cut -c1-200
stamp "sum_selected rows"
timeout "$(lim 200)" ./.gpu/bench_kernels --filter sum_selected --reps 3 --json-out "$w/ss.json" > "$w/ss.log" 2>&1
echo "rc $?"; grep -E "^card|sum_selected" "$w/ss.log" | cut -c1-200
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
