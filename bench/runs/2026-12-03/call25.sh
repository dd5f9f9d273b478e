#!/usr/bin/env bash
# 2026-12-03 (sixth session), call 25. Binaries at main (MSM windows by
# measurement: 16 bits from 2^17 to 2^22 points, 20 from 2^23; the G1 0/1
# sum on its own inlined kernel; H in six transforms), CUZK_CUDA_ARCHS=90:
# .gpu and .gpu-prover.
#   1. every kernel check (MSMs at the new widths)
#   2. every GPU prover check
#   3. porep-like 2^24 compiled bench (call 23: 282.9 ms resident, 394.0
#      streamed; the MSMs of 2^17..2^22 points now at c=16)
#   4. default rows at --shrink 2 (G1 2^18 / 2^22 / 2^24, G2 2^22;
#      predicted from call 23's c=16 rows: 3.4 / 32.2 / 114.4 / 97.4) and
#      the 0/1 sum at 2^26 (predicted 18.3)
#   5. porep-like 2^27 compiled bench, one partition (run 3 on 2026-12-01:
#      3116.5 ms, H 570 ms, msm h 1479 ms; predicted now: H ~275 ms, msm h
#      ~850 ms)
set -u
out="${OUT:-/tmp}"
w=/tmp/call25; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((585 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "kernel checks"
mkdir -p "$w/tests"
OUT="$w/tests" timeout "$(lim 100)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -6 | cut -c1-160
stamp "prover checks"
mkdir -p "$w/prover"
OUT="$w/prover" timeout "$(lim 80)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "compiled bench 24"
timeout "$(lim 60)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|host path|streamed" "$w/bench24.log" | grep -v "^ok" | cut -c1-300
stamp "rows"
timeout "$(lim 50)" ./.gpu/bench_kernels --filter msm_g --shrink 2 --reps 2 --json-out "$w/rows.json" > "$w/rows.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/rows.log" | grep -E "vram( |$)" | cut -c1-60
timeout "$(lim 40)" ./.gpu/bench_kernels --filter sum_selected --reps 3 --json-out "$w/sum01.json" > "$w/sum01.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/sum01.log" | cut -c1-60
stamp "compiled bench 27"
timeout "$(( $(left) - 15 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|host path|streamed|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-300
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
