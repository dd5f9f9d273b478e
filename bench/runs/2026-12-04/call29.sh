#!/usr/bin/env bash
# 2026-12-04 (seventh session), call 29. Binaries at main with the MSM's
# shared-memory sort (kernels/msm_sort.cuh), CUZK_CUDA_ARCHS=90: .gpu and
# .gpu-prover.
#   1. every kernel check (the MSM cases now also run the shared-memory
#      sort under both chunk orders and every reduction form; the atomic
#      sort once) and the large MSM checks (--filter msm: 2^20 G1/G2 and
#      2^24 - 5 G1 sorted in window groups)
#   2. every GPU prover check
#   3. rows: G1 2^20/2^24/2^26 and G2 2^24 with the sort-atomic rows beside;
#      CUZK_MSM_PROFILE on the default rows. Predicted (call 28 phases minus
#      the sort's 56.4 / 12.5 / 13.5 ms, plus ~15 / ~4 / ~4): G1 2^26 ~385 ms,
#      G1 2^24 ~106, G2 2^24 ~329
#   4. porep-like 2^24 compiled bench (call 26: 286.3 ms resident)
set -u
out="${OUT:-/tmp}"
w=/tmp/call29; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((440 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "kernel checks"
mkdir -p "$w/tests" "$w/large"
OUT="$w/tests" timeout "$(lim 110)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -6 | cut -c1-200
OUT="$w/large" timeout "$(lim 70)" bash .gpu/gpu-test.sh --large --filter "msm/g" > "$w/large/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |window groups" "$w/large/run.log" | tail -6 | cut -c1-200
stamp "prover checks"
mkdir -p "$w/prover"
OUT="$w/prover" timeout "$(lim 90)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "rows"
CUZK_MSM_PROFILE=1 timeout "$(lim 90)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/g1.json" > "$w/g1.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g1.log" | cut -c1-60
CUZK_MSM_PROFILE=1 timeout "$(lim 60)" ./.gpu/bench_kernels --filter msm_g2 --reps 2 --json-out "$w/g2.json" > "$w/g2.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g2.log" | cut -c1-60
stamp "compiled bench 24"
timeout "$(lim 70)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|host path|streamed" "$w/bench24.log" | grep -v "^ok" | cut -c1-300
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
