#!/usr/bin/env bash
# 2026-12-04 (seventh session), call 30. Binaries at main after the merge of
# branch zpack (z packed by 0/1 on its way up) and the MSM's second sort
# (digits kept as keys, one window at a time past 1 GiB, 2^10-bucket parts)
# and in-place merge of chunk sums, CUZK_CUDA_ARCHS=90: .gpu, .gpu-prover.
#   1. kernel checks (MSM cases with the shared sort + in-place merge, the
#      copying merge, the atomic sort) and the large MSM checks
#   2. GPU prover checks (new: z packed and raw through the upload and back,
#      the compiled path with z packed and raw)
#   3. rows with CUZK_MSM_PROFILE: G1 2^20/2^24/2^26, G2 2^24, with
#      sort-atomic and merge-copy rows beside. Predicted against call 29's
#      atomic rows: sort 12.5 -> ~6 ms at 2^24 (56 -> ~22 at 2^26), merge
#      5.3 -> <1 (G1 2^24), ~11 -> ~1 (G2 2^24): G1 2^24 ~103, G1 2^26 ~385,
#      G2 2^24 ~322
#   4. porep-like 2^24 compiled bench, z packed then raw (zpack's
#      prediction: copies 16.2 -> ~9 ms, 537 -> ~85 MB sent)
set -u
out="${OUT:-/tmp}"
w=/tmp/call30; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((540 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "kernel checks"
mkdir -p "$w/tests" "$w/large" "$w/prover"
OUT="$w/tests" timeout "$(lim 120)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -6 | cut -c1-200
OUT="$w/large" timeout "$(lim 80)" bash .gpu/gpu-test.sh --large --filter "msm/g" > "$w/large/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |window groups" "$w/large/run.log" | tail -6 | cut -c1-200
stamp "prover checks"
OUT="$w/prover" timeout "$(lim 150)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|z (packed|raw) through|passed, " "$w/prover/run.log" | tail -8 | cut -c1-200
stamp "rows"
CUZK_MSM_PROFILE=1 timeout "$(lim 100)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/g1.json" > "$w/g1.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g1.log" | cut -c1-60
CUZK_MSM_PROFILE=1 timeout "$(lim 70)" ./.gpu/bench_kernels --filter msm_g2 --reps 2 --json-out "$w/g2.json" > "$w/g2.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g2.log" | cut -c1-60
stamp "compiled bench 24"
timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|host path|streamed|FAIL" "$w/bench24.log" | grep -v "^ok" | cut -c1-320
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
