#!/usr/bin/env bash
# Run as call 54 on 2026-12-05 (fourteenth session) exactly as planned in
# bench/runs/planned/fp64-a.sh (copied here); logs in call54/.
# Planned (2026-12-04, twelfth session; not run: no device was lent for
# the rest of that session). First of three calls measuring field_f64.cuh.
# Carried as .carry/bins.tgz (carry [".carry/bins.tgz"]; fp64-prepare.sh
# builds it), CUZK_CUDA_ARCHS=90:
#   .gpu      scripts/gpu-test.sh --prepare (default kernels; the FP64
#             products only in the test fatbin: test_f*_f64, bench variants
#             4-6)
#   .gpu-mix  CUZK_NVCC_DEFINES=CUZK_FP64_MIX_FQ,CUZK_FP64_MIX_FR
#             scripts/gpu-prepare.sh .gpu-mix scripts/gpu-test.sh gpu_tests
#             bench_kernels -- -p cuzk-cuda --features cuda --examples
#             (about half of each point formula's Fq products, one of each
#             Fq2 product's three, every other NTT butterfly's Fr product
#             on the FP64 pipe)
#   1. kernel checks, both builds (field/fr and fq fp64 products against
#      blst; in the mix build every curve, MSM, 0/1, NTT and H case).
#   2. card rates and NTT 2^27 rows (every pass), both builds.
#      Predicted (bench/gpu-kernels.md run 27): Fq FP64 product ~1.3x PTX's
#      26.2e9/s (issue-bound, 952 SASS instructions a product against
#      mont_mul_ptx's ~1276 IMAD-pipe cycles); side by side ~1.7x; Fr FP64
#      ~1.5x PTX (5.2e10/s); NTT forward 2^27 44.65 -> 36-40 ms if the r2x3 pass's
#      spills (72 -> 240 bytes) do not eat it (r2 / r3: no spills).
#   3. 0/1 rows, both builds (18.1 -> 13-14 ms predicted), and (added in
#      the thirteenth session) the paired row: the points' pair sums
#      resident beside them, 3/4 of the additions on a random half mask
#      (18.1 -> ~14 ms in the default build, ~10-11 with the mix; run 28;
#      the pair sums made on the device first, their time printed).
set -u
. bench/runs/lib.sh 560 /tmp/fp64a
mkdir -p "$w/tests" "$w/tests-mix"
tar -xzf .carry/bins.tgz
stamp "kernel checks, default build"
OUT="$w/tests" timeout "$(lim 110)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |fp64" "$w/tests/run.log" | tail -6 | cut -c1-200
stamp "kernel checks, mix build"
timeout "$(lim 110)" ./.gpu-mix/gpu_tests > "$w/tests-mix/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests-mix/run.log" | tail -6 | cut -c1-200
for b in gpu gpu-mix; do
    stamp "$b: card, NTT 2^27"
    CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 90)" ./.$b/bench_kernels --filter ntt --reps 3 --json-out "$w/$b-ntt.json" > "$w/$b-ntt.log" 2>&1
    echo "rc $?"; grep -E "^card|mul/s|FP64|ms \(floor" "$w/$b-ntt.log" | cut -c1-240
    grep -E "^ntt" "$w/$b-ntt.log" | cut -c1-70
    stamp "$b: 0/1 rows"
    timeout "$(lim 70)" ./.$b/bench_kernels --filter sum_selected --reps 3 --json-out "$w/$b-ss.json" > "$w/$b-ss.log" 2>&1
    echo "rc $?"; grep -E "sum_selected" "$w/$b-ss.log" | cut -c1-120
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
