#!/usr/bin/env bash
# Session 13 (2026-12-01, evening) GPU run 1: the NTT pass kernels in
# register rounds (r1, r2, r3, r3x2), the DIF inverse and evals_to_coset,
# and the G1 MSM kernels with inlined Fq products. Every kernel check, the
# large NTT round trips, the kernel bench (all variants side by side),
# Nsight Compute on the NTT passes and the G1 accumulation, then the GPU
# prover's checks (the H step now runs evals_to_coset).
set -u
out="${OUT:-/tmp}"
start=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - start) )); }
nvidia-smi > "$out/smi.txt" 2>&1
echo "== kernels $(date +%T)"
OUT="$out" timeout 150 bash .gpu/gpu-test.sh > "$out/kernels.log" 2>&1
grep -E "^FAIL|passed, " "$out/kernels.log" | tail -8
echo "== large ntt $(date +%T)"
timeout 80 ./.gpu/gpu_tests --large --filter "round trips" > "$out/large-ntt.log" 2>&1
tail -4 "$out/large-ntt.log"
echo "== bench $(date +%T)"
timeout 170 ./.gpu/bench_kernels --reps 3 --json-out "$out/bench.json" > "$out/bench.log" 2>&1
grep -E "ms \(floor" "$out/bench.log" | head -70
NCU="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"
echo "== ncu ntt $(date +%T) ($(left) s left)"
timeout 70 "$NCU" --clock-control none -k regex:ntt_pass_r --launch-count 120 $sections --csv \
    ./.gpu/bench_kernels --filter ntt --shrink 3 --reps 1 > "$out/ncu-ntt.csv" 2> "$out/ncu-ntt.err"
wc -l "$out/ncu-ntt.csv"; tail -2 "$out/ncu-ntt.err"
echo "== ncu msm $(date +%T) ($(left) s left)"
timeout 50 "$NCU" --clock-control none -k regex:msm_accumulate_g1 --launch-count 12 $sections --csv \
    ./.gpu/bench_kernels --filter "msm_g1 vram" --shrink 6 --reps 1 > "$out/ncu-msm.csv" 2> "$out/ncu-msm.err"
wc -l "$out/ncu-msm.csv"; tail -2 "$out/ncu-msm.err"
echo "== prover $(date +%T) ($(left) s left)"
OUT="$out" timeout $(( $(left) - 5 )) bash .gpu-prover/gpu-prover-test.sh > "$out/prover.log" 2>&1
grep -E "^FAIL|passed, " "$out/prover.log" | tail -8
echo "== done $(date +%T)"
cd "$out" && tar czf run1-logs.tgz *.log *.csv *.err *.json smi.txt 2>/dev/null; ls
