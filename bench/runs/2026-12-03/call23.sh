#!/usr/bin/env bash
# 2026-12-03 (sixth session), call 23. Binaries built at main (after the
# window cap, the 0/1 sum dealt by count, the upload's figures and H in
# six transforms: b41a396),
# CUZK_CUDA_ARCHS=90: .gpu (scripts/gpu-test.sh --prepare) and
# .gpu-prover (scripts/gpu-prover-test.sh --prepare).
#   1. every kernel check (the 0/1 sum's new cases: sparse, clustered,
#      past one wave; every MSM check at the capped window)
#   2. every GPU prover check
#   3. porep-like 2^24 compiled bench (upload's copies and bytes now shown;
#      H in six transforms: 35.6 -> ~31.6 ms predicted)
#   4. the 0/1 sum rows at 2^26 (run 17: 20.41 out of line, 19.99 inline;
#      predicted ~17.5 out of line)
#   5. G1 MSM rows (2^26 now at c=20: predicted ~415 ms)
#   6. window widths at --shrink 2: G1 2^18 / 2^22 / 2^24, G2 2^22
set -u
out="${OUT:-/tmp}"
w=/tmp/call23; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((540 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "kernel checks"
mkdir -p "$w/tests"
OUT="$w/tests" timeout "$(lim 150)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|sum_selected|passed, " "$w/tests/run.log" | tail -14 | cut -c1-160
stamp "prover checks"
mkdir -p "$w/prover"
OUT="$w/prover" timeout "$(lim 100)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "compiled bench 24"
timeout "$(lim 80)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|host path|streamed" "$w/bench24.log" | grep -v "^ok" | cut -c1-300
stamp "0/1 sum rows"
timeout "$(lim 60)" ./.gpu/bench_kernels --filter sum_selected --reps 3 --json-out "$w/sum01.json" > "$w/sum01.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/sum01.log" | cut -c1-72
stamp "G1 MSM rows"
timeout "$(lim 90)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/g1.json" > "$w/g1.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g1.log" | cut -c1-72
stamp "window widths, shrink 2"
CUZK_MSM_BENCH_WINDOWS=auto timeout "$(lim 90)" ./.gpu/bench_kernels --filter msm --shrink 2 --reps 2 --json-out "$w/win.json" > "$w/win.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/win.log" | grep -E "vram( |$)|c=" | cut -c1-72
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
