#!/usr/bin/env bash
# 2026-12-03 (fourth session), call 16: three kernel branches and the
# streamed compiled system, before merging (binaries built with
# CUZK_CUDA_ARCHS=90, carried in .gpu-*).
#   1. branch fq (on top of branch ntt; issue 14): every field's Montgomery
#      product's final subtraction and negation as PTX borrow chains (Fq
#      product 777-840 -> ~385 SASS): field/curve/MSM/NTT checks, MSM bench
#      new against main's kernels (.gpu-old/bench_kernels) back to back
#      (.gpu-fq/run.sh, <= 150 s)
#   2. the NTT rows of branch ntt's pass kernels (f*: fr_fast.cuh) against
#      r3x2 (which on branch fq compiles to the same code as f3x2), 2^27
#      round trips, with the fq binary (<= 80 s)
#   3. branch ba (issue 14): G1 bucket accumulation by batch-affine
#      additions: every G1 MSM check in every form, bench rows, ncu if time
#      is left (.gpu-ba/run-short.sh: ba's run.sh capped at 170 s)
#   4. branch s12 (issue 12 item 4): porep-like 2^24 by the compiled path
#      with matrices resident, streamed in 256 MiB row blocks, and the host
#      path (gpu_prover_test --bench-only --compiled-bench 24, what is left)
set -u
out="${OUT:-/tmp}"
t0=$(date +%s)
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s)"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv > "$out/gpu.txt" 2>&1
stamp fq
timeout 155 bash .gpu-fq/run.sh 2>&1 | tail -n 70
stamp "ntt (fq binary)"
mkdir -p "$out/ntt"
timeout 35 ./.gpu-fq/gpu_tests --large --filter "ntt/2^27 round trips" > "$out/ntt/checks-27.log" 2>&1
echo "rc=$?"; grep -vE "^ok " "$out/ntt/checks-27.log" | cut -c1-300 | tail -5; grep -cE "^ok " "$out/ntt/checks-27.log"
CUZK_NTT_BENCH_PASSES=r3x2,f3x2,f2x3,f2 timeout 45 ./.gpu-fq/bench_kernels --filter ntt --reps 3 \
    --json-out "$out/ntt/bench.json" > "$out/ntt/bench.log" 2>&1
echo "rc=$?"; grep -E "Fr mul|^ntt" "$out/ntt/bench.log" | cut -c1-160
stamp ba
timeout 175 bash .gpu-ba/run-short.sh 2>&1 | tail -n 90
left=$(( 560 - ($(date +%s) - t0) ))
stamp "s12 compiled bench 24 ($left s left)"
mkdir -p "$out/s12"
timeout "$left" ./.gpu-s12/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 \
  --json-out "$out/s12/bench24.json" > "$out/s12/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench|device path|host path|streamed|passed, " "$out/s12/bench24.log" | cut -c1-300
stamp done
